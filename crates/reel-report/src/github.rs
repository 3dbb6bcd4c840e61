//! GitHub Actions workflow commands (`::error file=…,line=…,title=…::message`), the one
//! writer of the annotations `reel diff --format github` and `reel verify --format
//! github` print, so GitHub shows each drift on the trace line it is about.

/// One annotation line (without its line break): `level`, the place (`file`, `line`)
/// when known, a title and the message, each escaped as GitHub wants.
pub fn annotation(level: &str, place: Option<(&str, u64)>, title: &str, message: &str) -> String {
    let loc = place.map_or_else(String::new, |(file, line)| {
        format!("file={},line={line},", escape(file, true))
    });
    format!(
        "::{level} {loc}title={}::{}",
        escape(title, true),
        escape(message, false)
    )
}

/// Escapes a workflow-command value (`%`, CR, LF; plus `:` and `,` in properties).
fn escape(s: &str, property: bool) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '%' => out.push_str("%25"),
            '\r' => out.push_str("%0D"),
            '\n' => out.push_str("%0A"),
            ':' if property => out.push_str("%3A"),
            ',' if property => out.push_str("%2C"),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn properties_and_messages_are_escaped_as_github_reads_them() {
        let a = annotation(
            "error",
            Some(("dir/a,b:c.jsonl", 14)),
            "reel: x, y",
            "50%\nnext",
        );
        assert_eq!(
            a,
            "::error file=dir/a%2Cb%3Ac.jsonl,line=14,title=reel%3A x%2C y::50%25%0Anext"
        );
        assert_eq!(
            annotation("warning", None, "t", "m"),
            "::warning title=t::m"
        );
    }
}
