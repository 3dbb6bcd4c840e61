use super::*;

fn limits() -> YamlLimits {
    YamlLimits::for_input(0, crate::MAX_DOCUMENT)
}

fn ok(text: &str) {
    assert_eq!(check(text, limits()), Ok(()), "{text}");
    // What the walk lets through, the parser reads without trouble.
    let _ = serde_norway::from_str::<serde_json::Value>(text);
}

fn too_deep(text: &str) {
    assert!(
        matches!(check(text, limits()), Err(YamlLimitError::TooDeep { .. })),
        "{:?}",
        check(text, limits())
    );
}

#[test]
fn transcripts_as_mcp_vcr_writes_them_pass() {
    ok(
        "messages:\n- dir: c2s\n  payload:\n    id: 1\n    jsonrpc: '2.0'\n    method: \
        initialize\n    params:\n      capabilities:\n        elicitation: {}\n  t: 343\n\
        meta:\n  recorded_at: '2026-11-30T10:00:00+00:00'\n",
    );
    ok("a: [1, [2, [3, {b: c}]]]\nd: \"[[[[ not nesting\"\ne: '{{{{'\n");
}

#[test]
fn nesting_up_to_the_limit_passes_and_one_more_is_refused() {
    let open = "[".repeat(MAX_DEPTH);
    let close = "]".repeat(MAX_DEPTH);
    ok(&format!("{open}{close}\n"));
    too_deep(&format!("[{open}{close}]\n"));
}

#[test]
fn deep_flow_nesting_is_refused_without_reading_it_all() {
    too_deep(&"[".repeat(100_000));
    too_deep(&"{a: ".repeat(100_000));
    let err = check(&format!("k: v\n{}", "[".repeat(100_000)), limits()).unwrap_err();
    assert_eq!(
        err,
        YamlLimitError::TooDeep {
            line: 2,
            limit: MAX_DEPTH
        }
    );
    assert!(err.to_string().contains("more than 128 deep"), "{err}");
}

#[test]
fn deep_block_nesting_is_refused() {
    too_deep(&"- ".repeat(1000));
    let mut text = String::new();
    for i in 0..200 {
        text.push_str(&" ".repeat(i));
        text.push_str("k:\n");
    }
    too_deep(&text);
}

#[test]
fn brackets_in_scalars_are_not_nesting() {
    let many = "[".repeat(1000);
    ok(&format!("a: \"{many}\"\n"));
    ok(&format!("a: '{many}'\n"));
    ok(&format!("a: x{many}\n"));
    ok(&format!("a: |\n  {many}\n  {many}\nb: 1\n"));
    ok(&format!("a: >-\n    {many}\n\n    {many}\nb: 1\n"));
    ok(&format!("# {many}\na: 1 # {many}\n"));
    ok(&format!("a: plain\n  continued {many}\n  \"{many}\nb: 1\n"));
    ok(&format!("a: \"esc \\\" {many}\"\n"));
    ok(&format!("a: 'it''s {many}'\n"));
}

#[test]
fn a_quote_inside_a_plain_scalar_hides_nothing() {
    // The `"` continues the plain scalar; the deep line after it is structure.
    let deep = "[".repeat(1000) + &"]".repeat(1000);
    too_deep(&format!("a: x\n  \"\nb: {deep}\nc: \"\n"));
    too_deep(&format!("a: x'\nb: {deep}\nc: '\n"));
    // A block scalar ends at the first line indented less than its content.
    too_deep(&format!("- k: |\n    text\n  j: {deep}\n"));
    too_deep(&format!("k: |\n  text\nj: {deep}\n"));
    // A comment starts only after a blank; in flow context a bracket ends a plain
    // scalar.
    ok(&format!("a: b#{deep}\n"));
    too_deep(&format!("a: [b#{deep}]\n"));
}

fn laughs(levels: usize, width: usize) -> String {
    let mut text = String::from("a0: &a0 [\"lol\"]\n");
    for i in 1..levels {
        let refs = vec![format!("*a{}", i - 1); width].join(", ");
        text.push_str(&format!("a{i}: &a{i} [{refs}]\n"));
    }
    text
}

#[test]
fn an_alias_bomb_is_refused() {
    let text = laughs(10, 10);
    assert!(text.len() < 2000);
    assert!(
        matches!(
            check(&text, limits()),
            Err(YamlLimitError::TooExpanded { limit, .. }) if limit == EXPANSION_FLOOR
        ),
        "{:?}",
        check(&text, limits())
    );
}

#[test]
fn aliases_within_the_limit_pass() {
    ok(&laughs(3, 3));
    ok("base: &b\n  x: 1\n  y: [1, 2]\nother:\n  k: *b\nthird: *b\n");
    ok("- &a {x: 1}\n- *a\n- [&s str, *s]\n");
    ok("k: &a !!str text\nj: *a\n");
}

#[test]
fn the_expansion_limit_grows_with_the_document() {
    assert_eq!(
        YamlLimits::for_input(10, crate::MAX_DOCUMENT).expanded,
        EXPANSION_FLOOR
    );
    assert_eq!(
        YamlLimits::for_input(1 << 20, crate::MAX_DOCUMENT).expanded,
        4 << 20
    );
    assert_eq!(
        YamlLimits::for_input(400 << 20, crate::MAX_DOCUMENT).expanded,
        crate::MAX_DOCUMENT
    );
}

#[test]
fn an_alias_inside_its_own_node_is_refused() {
    for text in [
        "&a [*a]\n",
        "a: &a [1, [*a, *a]]\n",
        "a: &a {k: *a}\n",
        "a: &a\n  k: *a\n",
        "a: &a\n  - x\n  - *a\n",
        "a: &a\n  [1,\n*a]\n",
    ] {
        assert!(
            matches!(check(text, limits()), Err(YamlLimitError::Recursive { .. })),
            "{text}: {:?}",
            check(text, limits())
        );
    }
}

#[test]
fn an_unknown_alias_is_left_to_the_parser() {
    ok("a: *nothing\n");
}

#[test]
fn every_line_break_counts() {
    let deep = "[".repeat(1000);
    too_deep(&format!("a: |\r\n  text\r\nb: {deep}\n"));
    too_deep(&format!("a: x\u{2028}b: {deep}\n"));
}
