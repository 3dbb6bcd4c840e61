//! JUnit XML, the test report every CI system reads: one `<testcase>` per exchange
//! compared, a drift as its `<failure>`. The one writer of `--format junit`.

use crate::display::markup;

/// An attribute value: XML reads a raw line break or tab there as a space, so they go
/// as character references.
fn attr(s: &str) -> String {
    markup(s, true)
        .replace('\n', "&#10;")
        .replace('\r', "&#13;")
        .replace('\t', "&#9;")
}

/// One test case.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Case {
    /// Its name (`line 14: tools/call add`).
    pub name: String,
    /// Its class name (the suite's: `reel.verify.<trace>`).
    pub classname: String,
    /// The drift, when it failed.
    pub failure: Option<Failure>,
}

/// Why a case failed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Failure {
    /// `type`: the drift's class and kind (`output drift (result-changed)`).
    pub kind: String,
    /// `message`: the drift in one line.
    pub message: String,
    /// The element's text: the details.
    pub text: String,
}

/// The document: one `<testsuite>` named `suite` holding `cases`, in `<testsuites>`.
pub fn document(suite: &str, cases: &[Case]) -> String {
    let failures = cases.iter().filter(|c| c.failure.is_some()).count();
    let mut out = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    let counts = format!(
        "tests=\"{}\" failures=\"{failures}\" errors=\"0\"",
        cases.len()
    );
    out.push_str(&format!("<testsuites name=\"{}\" {counts}>\n", attr(suite)));
    out.push_str(&format!(
        "  <testsuite name=\"{}\" {counts} skipped=\"0\">\n",
        attr(suite)
    ));
    for c in cases {
        let head = format!(
            "    <testcase classname=\"{}\" name=\"{}\"",
            attr(&c.classname),
            attr(&c.name)
        );
        match &c.failure {
            None => out.push_str(&format!("{head}/>\n")),
            Some(f) => out.push_str(&format!(
                "{head}>\n      <failure type=\"{}\" message=\"{}\">{}</failure>\n    </testcase>\n",
                attr(&f.kind),
                attr(&f.message),
                markup(&f.text, false)
            )),
        }
    }
    out.push_str("  </testsuite>\n</testsuites>\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cases_and_failures_are_escaped_and_counted() {
        let cases = [
            Case {
                name: "line 2: initialize".into(),
                classname: "reel.verify.t".into(),
                failure: None,
            },
            Case {
                name: "line 4: tools/call <add>".into(),
                classname: "reel.verify.t".into(),
                failure: Some(Failure {
                    kind: "output drift (result-changed)".into(),
                    message: "\"42\" -> \"43\" & more\u{1b}[31m".into(),
                    text: "/result/content/0/text".into(),
                }),
            },
        ];
        let x = document("reel verify t.jsonl", &cases);
        assert!(x.contains(r#"<testsuite name="reel verify t.jsonl" tests="2" failures="1" errors="0" skipped="0">"#), "{x}");
        assert!(x.contains(r#"<testcase classname="reel.verify.t" name="line 2: initialize"/>"#));
        assert!(x.contains("name=\"line 4: tools/call &lt;add&gt;\""));
        assert!(
            x.contains("message=\"&quot;42&quot; -&gt; &quot;43&quot; &amp; more\\u{1b}[31m\""),
            "{x}"
        );
        assert!(!x.contains('\u{1b}'));
    }
}
