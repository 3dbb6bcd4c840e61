//! Exact nearest-rank percentiles in memory that grows with the number of *distinct*
//! values, not with the number of samples.
//!
//! Latencies are whole milliseconds and TTFTs are few, so a million calls typically
//! hold a few thousand distinct values: a count per value keeps `reel stats` within its
//! memory bound on any file size while giving the same answer as sorting every sample.

use std::collections::HashMap;

/// A multiset of finite numbers.
#[derive(Debug, Default, Clone)]
pub(crate) struct Samples {
    counts: HashMap<u64, u64>,
    len: u64,
}

impl Samples {
    /// Adds a sample; non-finite values are ignored (they are never reported).
    pub fn add(&mut self, v: f64) {
        if !v.is_finite() {
            return;
        }
        // -0.0 and 0.0 are one value.
        let v = if v == 0.0 { 0.0 } else { v };
        *self.counts.entry(v.to_bits()).or_insert(0) += 1;
        self.len += 1;
    }

    /// Nearest-rank percentile `p` (0–100): the smallest value with at least
    /// `ceil(p/100 × n)` samples at or below it (rank at least 1). `None` when empty.
    pub fn percentile(&self, p: u32) -> Option<f64> {
        if self.len == 0 {
            return None;
        }
        let rank = (u64::from(p) * self.len).div_ceil(100).clamp(1, self.len);
        let mut values: Vec<(f64, u64)> = self
            .counts
            .iter()
            .map(|(k, n)| (f64::from_bits(*k), *n))
            .collect();
        values.sort_by(|a, b| a.0.total_cmp(&b.0));
        let mut seen = 0;
        for (v, n) in values {
            seen += n;
            if seen >= rank {
                return Some(v);
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn of(vs: &[f64]) -> Samples {
        let mut s = Samples::default();
        for v in vs {
            s.add(*v);
        }
        s
    }

    #[test]
    fn nearest_rank() {
        let s = of(&[40.0, 10.0, 30.0, 20.0]);
        // p50 of 4: rank ceil(2) = 2 -> 20; p95: rank ceil(3.8) = 4 -> 40.
        assert_eq!(s.percentile(50), Some(20.0));
        assert_eq!(s.percentile(95), Some(40.0));
        assert_eq!(s.percentile(0), Some(10.0));
        let one = of(&[7.0]);
        assert_eq!(one.percentile(50), Some(7.0));
        assert_eq!(Samples::default().percentile(50), None);
    }

    #[test]
    fn repeated_values_count_once_each() {
        // 19 x 1 and 1 x 100: p95 is rank 19 -> 1; p100 -> 100.
        let mut vs = vec![1.0; 19];
        vs.push(100.0);
        let s = of(&vs);
        assert_eq!(s.percentile(95), Some(1.0));
        assert_eq!(s.percentile(100), Some(100.0));
        // 19 x 1 and 2 x 100: p95 is rank ceil(19.95) = 20 -> 100.
        let mut m = s.clone();
        m.add(100.0);
        assert_eq!(m.percentile(95), Some(100.0));
    }
}
