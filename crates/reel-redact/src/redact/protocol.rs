//! What the walker must know of JSON-RPC and MCP to keep replay working: which
//! positions are never touched because replay, pairing or matching depends on them
//! (which member names hold secrets is `names`).
//!
//! Why this lives apart from the walker: these are the project's replay exemptions,
//! a list a reviewer must be able to read in one screen and compare with DESIGN.md.
//! Positions are recognised structurally (a *role* per container: envelope, params,
//! result, …) so the decision for a member never depends on a sibling that may come
//! later in the text (`method` may follow `params`).

/// Member names never touched wherever they appear: a progress token is echoed in
/// notifications, a request state and a cursor are handed back to the server verbatim,
/// and JSON Schemas describe data (a property named `password` is not a password).
pub(crate) const VERBATIM_ANYWHERE: [&str; 7] = [
    "progressToken",
    "requestState",
    "cursor",
    "nextCursor",
    "inputSchema",
    "outputSchema",
    "requestedSchema",
];

/// What a container is, as far as the exemptions care.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Role {
    /// A root array (a JSON-RPC batch).
    Batch,
    /// A JSON-RPC message: the root object or an object in a batch.
    Envelope,
    /// `params` of an envelope or of an embedded request.
    Params,
    /// `result` of an envelope.
    Result,
    /// `result.tools` or `result.prompts`: a listing of named things.
    Listing,
    /// One element of a listing.
    Listed,
    /// `result.inputRequests` (2026-07-28): requests embedded in a result.
    InputRequests,
    /// One embedded request: has its own `method` and `params`.
    EmbeddedRequest,
    /// Anything else.
    Other,
}

/// The role of the root value.
pub(crate) fn root_role(is_object: bool) -> Role {
    if is_object {
        Role::Envelope
    } else {
        Role::Batch
    }
}

/// The role of a container found under `key` (or at an index when `None`) in a
/// container of role `parent`.
pub(crate) fn child_role(parent: Role, key: Option<&str>, is_object: bool) -> Role {
    match (parent, key, is_object) {
        (Role::Batch, None, true) => Role::Envelope,
        (Role::Envelope | Role::EmbeddedRequest, Some("params"), true) => Role::Params,
        (Role::Envelope, Some("result"), true) => Role::Result,
        (Role::Result, Some("tools" | "prompts"), false) => Role::Listing,
        (Role::Listing, None, true) => Role::Listed,
        (Role::Result, Some("inputRequests"), true) => Role::InputRequests,
        (Role::InputRequests, Some(_), true) => Role::EmbeddedRequest,
        _ => Role::Other,
    }
}

/// Whether the member `key` of a container of role `parent` is left exactly as
/// received, with everything under it.
pub(crate) fn is_verbatim(parent: Role, key: &str) -> bool {
    VERBATIM_ANYWHERE.contains(&key)
        || match parent {
            Role::Envelope => matches!(key, "jsonrpc" | "id" | "method"),
            Role::EmbeddedRequest => key == "method",
            // Tool and prompt names (tools/call, prompts/get) and the id a
            // notifications/cancelled refers to.
            Role::Params => matches!(key, "name" | "requestId"),
            Role::Listed => key == "name",
            _ => false,
        }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roles_follow_the_envelope() {
        let env = root_role(true);
        assert_eq!(env, Role::Envelope);
        assert_eq!(child_role(root_role(false), None, true), Role::Envelope);
        assert_eq!(child_role(env, Some("params"), true), Role::Params);
        let result = child_role(env, Some("result"), true);
        let listing = child_role(result, Some("tools"), false);
        assert_eq!(child_role(listing, None, true), Role::Listed);
        assert_eq!(child_role(Role::Params, Some("params"), true), Role::Other);
        assert!(is_verbatim(Role::Listed, "name"));
        assert!(!is_verbatim(Role::Other, "name"));
        assert!(is_verbatim(Role::Other, "progressToken"));
        assert!(is_verbatim(Role::Envelope, "id"));
        assert!(!is_verbatim(Role::Params, "id"));
    }
}
