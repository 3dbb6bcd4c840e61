//! How far a long read has come, for a progress bar.
//!
//! Commands that read whole traces (`check`, `stats`, `diff`) can take minutes on
//! multi-gigabyte files. They report bytes read against bytes to read through one
//! callback type; the library never draws anything (the CLI decides whether stderr is
//! a terminal and how a bar looks).

/// Bytes read so far of the bytes to read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Progress {
    /// Bytes read, every input together.
    pub done: u64,
    /// Bytes of every input.
    pub total: u64,
}

/// How often a reader reports: every this many bytes (and once at the end).
pub const STEP: u64 = 1 << 20;

/// Calls `report` when `done` has passed the next `STEP` (1 MiB) since the last report.
#[derive(Debug, Default)]
pub struct Throttle {
    next: u64,
}

impl Throttle {
    /// Reports `progress` if it has moved a step on since the last report.
    pub fn tick(&mut self, progress: Progress, report: &mut dyn FnMut(Progress)) {
        if progress.done >= self.next {
            self.next = progress.done + STEP;
            report(progress);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_throttle_reports_once_a_step() {
        let mut seen = Vec::new();
        let mut t = Throttle::default();
        for done in (0..5 * STEP).step_by(1 << 16) {
            t.tick(
                Progress {
                    done,
                    total: 5 * STEP,
                },
                &mut |p| seen.push(p.done),
            );
        }
        assert_eq!(seen, vec![0, STEP, 2 * STEP, 3 * STEP, 4 * STEP]);
    }
}
