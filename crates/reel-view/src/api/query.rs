//! A request to the API as the handlers read it: its query parameters decoded, the
//! limits of a page, and the error an answer becomes when a request cannot be met.

use crate::catalog::KeyError;

/// Lines one page holds at most.
pub const MAX_PAGE: usize = 1000;
/// Search hits one answer holds at most.
pub const MAX_HITS: usize = 500;

/// A request the API cannot answer.
#[derive(Debug)]
pub struct ApiError {
    /// The HTTP status.
    pub status: u16,
    /// What went wrong.
    pub message: String,
}

impl ApiError {
    pub(super) fn bad(message: impl Into<String>) -> ApiError {
        ApiError {
            status: 400,
            message: message.into(),
        }
    }
}

impl From<KeyError> for ApiError {
    fn from(e: KeyError) -> ApiError {
        let status = match e {
            KeyError::Outside(_) => 403,
            KeyError::Missing(_) => 404,
            KeyError::Unreadable(_) => 422,
        };
        ApiError {
            status,
            message: e.to_string(),
        }
    }
}

/// The query parameters of a request, decoded.
#[derive(Debug, Default)]
pub struct Query(Vec<(String, String)>);

impl Query {
    /// Parses `a=1&b=x%20y` (`+` is a space).
    pub fn parse(q: Option<&str>) -> Result<Query, ApiError> {
        let mut out = Vec::new();
        for pair in q.unwrap_or("").split('&').filter(|p| !p.is_empty()) {
            let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
            let dec = |s: &str| {
                crate::paths::decode(&s.replace('+', " "))
                    .map_err(|e| ApiError::bad(format!("query parameter {k:?}: {e}")))
            };
            out.push((dec(k)?, dec(v)?));
        }
        Ok(Query(out))
    }

    /// The first value of `name`.
    pub fn get(&self, name: &str) -> Option<&str> {
        self.0
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }

    /// Every value of `name`.
    pub fn all(&self, name: &str) -> Vec<&str> {
        self.0
            .iter()
            .filter(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
            .collect()
    }

    pub(super) fn required(&self, name: &str) -> Result<&str, ApiError> {
        self.get(name)
            .ok_or_else(|| ApiError::bad(format!("missing query parameter {name:?}")))
    }

    pub(super) fn number(&self, name: &str, default: u64) -> Result<u64, ApiError> {
        match self.get(name) {
            None | Some("") => Ok(default),
            Some(v) => v
                .parse()
                .map_err(|_| ApiError::bad(format!("{name}={v:?} is not a number"))),
        }
    }

    /// The `count` of a page: 200 unless asked, at most [`MAX_PAGE`].
    pub(super) fn count(&self) -> Result<usize, ApiError> {
        Ok((self.number("count", 200)? as usize).min(MAX_PAGE))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parameters_are_decoded_and_repeated_ones_kept_in_order() {
        let q = Query::parse(Some("t=a%2Fb.jsonl&q=hello+world&t=c&flag&empty=")).unwrap();
        assert_eq!(q.get("t"), Some("a/b.jsonl"));
        assert_eq!(q.all("t"), ["a/b.jsonl", "c"]);
        assert_eq!(q.get("q"), Some("hello world"));
        assert_eq!(q.get("flag"), Some(""));
        assert_eq!(q.get("missing"), None);
        assert!(Query::parse(None).unwrap().all("t").is_empty());
    }

    #[test]
    fn a_bad_escape_is_a_400_naming_the_parameter() {
        let e = Query::parse(Some("q=%zz")).unwrap_err();
        assert_eq!(e.status, 400);
        assert!(
            e.message.starts_with("query parameter \"q\": "),
            "{}",
            e.message
        );
        let e = Query::parse(Some("n=%00")).unwrap_err();
        assert_eq!(e.status, 400);
    }

    #[test]
    fn numbers_default_when_absent_or_empty_and_pages_are_capped() {
        let q = Query::parse(Some("from=7&n=&count=5000")).unwrap();
        assert_eq!(q.number("from", 1).unwrap(), 7);
        assert_eq!(q.number("n", 3).unwrap(), 3);
        assert_eq!(q.number("absent", 9).unwrap(), 9);
        assert_eq!(q.count().unwrap(), MAX_PAGE);
        assert_eq!(Query::parse(None).unwrap().count().unwrap(), 200);
        let e = Query::parse(Some("from=-1"))
            .unwrap()
            .number("from", 1)
            .unwrap_err();
        assert_eq!(
            (e.status, e.message.as_str()),
            (400, "from=\"-1\" is not a number")
        );
        let e = Query::parse(None).unwrap().required("t").unwrap_err();
        assert_eq!(
            (e.status, e.message.as_str()),
            (400, "missing query parameter \"t\"")
        );
    }

    #[test]
    fn key_errors_become_their_statuses() {
        let status = |e: KeyError| ApiError::from(e).status;
        assert_eq!(status(KeyError::Outside("k".into())), 403);
        assert_eq!(status(KeyError::Missing("k".into())), 404);
        assert_eq!(status(KeyError::Unreadable("k".into())), 422);
    }
}
