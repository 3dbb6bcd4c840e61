//! What makes a root object a JSON-RPC envelope, noted member by member as the walker
//! passes them, so the one pass that redacts a message also tells its kind.

use reel_trace::jsonrpc::{EnvelopeShape, IdShape, RpcKind};

/// The members of a root object that decide its JSON-RPC kind, noted as the walker
/// passes them. A repeated one makes the object no envelope, as it does for the
/// parser of [`reel_trace::jsonrpc::Envelope`], which refuses a duplicate field.
#[derive(Debug, Default)]
pub(super) struct RootMembers {
    /// Which of [`ENVELOPE_MEMBERS`] were seen, a bit each.
    seen: u8,
    repeated: bool,
    id_null: bool,
    method_string: bool,
}

/// The members of an envelope, in the order of their bits in [`RootMembers::seen`].
const ENVELOPE_MEMBERS: [&str; 6] = ["jsonrpc", "id", "method", "params", "result", "error"];

impl RootMembers {
    fn has(&self, member: &str) -> bool {
        let bit = ENVELOPE_MEMBERS.iter().position(|m| *m == member);
        bit.is_some_and(|b| self.seen & (1 << b) != 0)
    }

    /// Member `key` of the root object, whose value starts with `first`.
    pub(super) fn note(&mut self, key: &str, first: u8) {
        let Some(bit) = ENVELOPE_MEMBERS.iter().position(|m| *m == key) else {
            return;
        };
        self.repeated |= self.seen & (1 << bit) != 0;
        self.seen |= 1 << bit;
        match key {
            "id" => self.id_null = first == b'n',
            "method" => self.method_string = first == b'"',
            _ => {}
        }
    }

    pub(super) fn kind(&self) -> RpcKind {
        if self.repeated {
            return RpcKind::Invalid;
        }
        let id = if self.id_null {
            IdShape::Null
        } else {
            IdShape::Given
        };
        EnvelopeShape {
            method: self.has("method") && self.method_string,
            id: self.has("id").then_some(id),
            result: self.has("result"),
            error: self.has("error"),
        }
        .kind()
    }
}
