//! The GitHub annotation level of a drift class; the annotation itself is
//! `reel_report::github`'s.

use super::Class;

/// The annotation level a drift class gets: structural drift fails a check, output
/// drift warns.
pub fn level(class: Class) -> &'static str {
    match class {
        Class::Structural => "error",
        Class::Output => "warning",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn structural_drift_is_an_error_and_output_drift_a_warning() {
        assert_eq!(level(Class::Structural), "error");
        assert_eq!(level(Class::Output), "warning");
    }
}
