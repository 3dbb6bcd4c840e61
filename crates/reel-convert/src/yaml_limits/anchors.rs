//! Anchors and aliases as the walk counts them: each anchored node's expanded size once
//! it has ended, each alias adding its node's size, an alias to a node not known to
//! have ended refused as recursive.

use super::node::{Content, Ends, Node};
use super::{Walk, YamlLimitError};

impl<'a> Walk<'a> {
    /// Bytes read so far, with what aliases added.
    pub(super) fn expanded(&self) -> u64 {
        self.pos as u64 + self.extra
    }

    pub(super) fn anchor(&mut self, name: &'a [u8], line: u64) {
        let id = self.nodes.len();
        self.nodes.push(Node {
            start: self.expanded(),
            line,
            flow: self.flow,
            ends: Ends::Awaiting,
            size: None,
        });
        self.names.insert(name, id);
        self.open.push(id);
    }

    pub(super) fn alias(&mut self, name: &[u8], line: u64) -> Result<(), YamlLimitError> {
        // An unknown anchor is the parser's error to give.
        let Some(&id) = self.names.get(name) else {
            return Ok(());
        };
        let Some(size) = self.nodes[id].size else {
            return Err(YamlLimitError::Recursive {
                line,
                name: String::from_utf8_lossy(name).into_owned(),
            });
        };
        self.extra = self.extra.saturating_add(size);
        if self.expanded() > self.limits.expanded {
            return Err(YamlLimitError::TooExpanded {
                line,
                limit: self.limits.expanded,
            });
        }
        Ok(())
    }

    /// A token that can be (or begin) the content of anchored nodes still awaiting it.
    pub(super) fn content(&mut self, what: Content) {
        let (line, column, flow) = (self.line, self.column, self.flow);
        for &id in self.open.iter().rev() {
            let node = &mut self.nodes[id];
            if node.ends != Ends::Awaiting {
                break;
            }
            node.ends = if node.flow == 0 && flow == 0 && line > node.line {
                // The node is what starts on a later line: a block collection or a
                // scalar, indented past its parent.
                Ends::LeftOf(column)
            } else {
                match what {
                    Content::FlowStart => Ends::FlowBelow(flow + 1),
                    Content::Scalar | Content::Other => Ends::ThisToken,
                }
            };
        }
    }

    pub(super) fn close_top_while(&mut self, ended: impl Fn(Ends) -> bool) {
        while let Some(&id) = self.open.last() {
            if !ended(self.nodes[id].ends) {
                break;
            }
            self.open.pop();
            let end = self.expanded();
            let node = &mut self.nodes[id];
            node.size = Some(end - node.start);
        }
    }

    pub(super) fn end_token_nodes(&mut self) {
        self.close_top_while(|e| e == Ends::ThisToken);
    }

    pub(super) fn end_flow_nodes(&mut self) {
        let flow = self.flow;
        self.close_top_while(|e| matches!(e, Ends::FlowBelow(level) if flow < level));
    }

    pub(super) fn end_block_nodes(&mut self) {
        let column = self.column;
        self.close_top_while(|e| matches!(e, Ends::LeftOf(c) if column < c));
    }
}
