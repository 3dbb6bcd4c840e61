//! The provider APIs reel knows: which endpoint a path is and which provider speaks it
//! (defined with the trace format, in `reel_trace::llm`), and each provider's error shape (reel's own answers — a bad upstream, a replay miss —
//! must parse as the provider's errors in the client's SDK).

pub use reel_trace::llm::{Endpoint, Provider};

/// The kind of an error reel answers with itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Failure {
    /// The upstream could not be reached or broke off (502).
    BadGateway,
    /// No route for the path (404).
    NoRoute,
    /// Replay: the tape has no answer for the request (404).
    Miss,
    /// The request cannot be read (400).
    BadRequest,
    /// Too many request bytes are being read at once; retry (503, `retry-after: 1`).
    Busy,
}

impl Failure {
    /// The HTTP status reel answers with.
    pub fn status(self) -> u16 {
        match self {
            Failure::BadGateway => 502,
            Failure::NoRoute | Failure::Miss => 404,
            Failure::BadRequest => 400,
            Failure::Busy => 503,
        }
    }

    fn anthropic_type(self) -> &'static str {
        match self {
            Failure::BadGateway => "api_error",
            Failure::NoRoute | Failure::Miss => "not_found_error",
            Failure::BadRequest => "invalid_request_error",
            Failure::Busy => "overloaded_error",
        }
    }

    fn openai_code(self) -> &'static str {
        match self {
            Failure::BadGateway => "bad_gateway",
            Failure::NoRoute => "unknown_url",
            Failure::Miss => "reel_tape_miss",
            Failure::BadRequest => "invalid_request",
            Failure::Busy => "reel_busy",
        }
    }
}

/// An error body in `provider`'s own shape: Anthropic
/// `{"type":"error","error":{"type","message"}}`, OpenAI
/// `{"error":{"message","type","param","code"}}`, Ollama `{"error":"…"}`.
pub fn error_body(provider: Provider, failure: Failure, message: &str) -> Vec<u8> {
    let v = match provider {
        Provider::Anthropic => serde_json::json!({
            "type": "error",
            "error": { "type": failure.anthropic_type(), "message": message },
        }),
        Provider::OpenAi => serde_json::json!({
            "error": {
                "message": message,
                "type": if failure == Failure::BadRequest { "invalid_request_error" } else { "reel_error" },
                "param": null,
                "code": failure.openai_code(),
            },
        }),
        Provider::Ollama => serde_json::json!({ "error": message }),
    };
    serde_json::to_vec(&v).unwrap_or_default()
}

/// The whole HTTP answer reel gives with [`error_body`]: the failure's status and a JSON
/// body in the provider's shape (the proxy's own errors and replay's misses alike).
pub fn error_response(
    provider: Provider,
    failure: Failure,
    message: &str,
) -> http::Response<reel_net::reply::Reply> {
    let mut r = http::Response::new(reel_net::reply::Reply::full(error_body(
        provider, failure, message,
    )));
    *r.status_mut() =
        http::StatusCode::from_u16(failure.status()).unwrap_or(http::StatusCode::BAD_GATEWAY);
    r.headers_mut().insert(
        http::header::CONTENT_TYPE,
        http::HeaderValue::from_static("application/json"),
    );
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_bodies_have_the_provider_shape() {
        let a: serde_json::Value =
            serde_json::from_slice(&error_body(Provider::Anthropic, Failure::Miss, "m")).unwrap();
        assert_eq!(a["type"], "error");
        assert_eq!(a["error"]["type"], "not_found_error");
        let o: serde_json::Value =
            serde_json::from_slice(&error_body(Provider::OpenAi, Failure::BadGateway, "m"))
                .unwrap();
        assert_eq!(o["error"]["message"], "m");
    }
}
