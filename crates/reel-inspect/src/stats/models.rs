//! Per-model aggregates over assistant turns: calls, token sums, cache hit rate,
//! thinking (exact or estimated), TTFT percentiles, model time and estimated cost.
//!
//! Invariants (spec §1.5.2, research/mcp-tape.md §1.11):
//! - echoed turns are counted as such and excluded from every other number;
//! - usage sums the turn fields directly (the usage invariant: `input_tokens` excludes
//!   cache tokens, `thinking_tokens` is part of `output_tokens`, never added to it);
//! - a sum is `null` unless some turn reported that field; a rate is `null` when its
//!   denominator is unknown or zero; cost is `null` unless a model is priced.

use std::collections::HashMap;

use super::prices::{Price, PriceTable};
use super::records::TurnRec;
use super::report::{Cost, ModelRow, ModelSummary, Models};
use super::samples::Samples;

/// The model key of a turn without one.
pub const NO_MODEL: &str = "(no model)";

#[derive(Debug, Default)]
struct ModelSlot {
    calls: u64,
    input: f64,
    output: f64,
    cache_read: f64,
    cache_creation: f64,
    usage_turns: u64,
    cache_turns: u64,
    cache_read_turns: u64,
    cache_creation_turns: u64,
    thinking_exact: f64,
    thinking_estimated: f64,
    ttft: Samples,
}

/// Model aggregates collected so far.
#[derive(Debug, Default)]
pub(crate) struct ModelAgg {
    by_model: HashMap<String, ModelSlot>,
    assistant_turns: u64,
    turns: u64,
    echoed_turns: u64,
    model_time_ms: f64,
    saw_model_time: bool,
}

impl ModelAgg {
    /// Adds one turn record.
    pub fn add(&mut self, turn: &TurnRec<'_>) {
        self.turns += 1;
        if turn.role.get() != Some("assistant") {
            return;
        }
        if turn.echoed.0 {
            self.echoed_turns += 1;
            return;
        }
        self.assistant_turns += 1;
        let key = turn.model.non_empty().unwrap_or(NO_MODEL);
        if !self.by_model.contains_key(key) {
            self.by_model.insert(key.to_owned(), ModelSlot::default());
        }
        let Some(slot) = self.by_model.get_mut(key) else {
            return;
        };
        slot.calls += 1;
        if let Some(u) = &turn.usage.0 {
            slot.usage_turns += 1;
            slot.input += u.input_tokens.0.unwrap_or(0.0);
            slot.output += u.output_tokens.0.unwrap_or(0.0);
            let (read, creation) = (u.cache_read_input_tokens.0, u.cache_creation_input_tokens.0);
            if read.is_some() || creation.is_some() {
                slot.cache_turns += 1;
                slot.cache_read_turns += u64::from(read.is_some());
                slot.cache_creation_turns += u64::from(creation.is_some());
                slot.cache_read += read.unwrap_or(0.0);
                slot.cache_creation += creation.unwrap_or(0.0);
            }
        }
        match turn.usage.0.as_ref().and_then(|u| u.thinking_tokens.0) {
            Some(exact) => slot.thinking_exact += exact,
            None => {
                let chars: usize = turn
                    .blocks
                    .items()
                    .iter()
                    .filter_map(|b| b.0.as_ref())
                    .filter(|b| b.ty.get() == Some("thinking"))
                    .filter_map(|b| b.thinking.get())
                    .map(|s| s.encode_utf16().count())
                    .sum();
                if chars > 0 {
                    slot.thinking_estimated += estimate_thinking_tokens(chars);
                }
            }
        }
        if let Some(t) = &turn.timing.0 {
            if let Some(ttft) = t.ttft_ms.0 {
                slot.ttft.add(ttft);
            }
            if let Some(d) = t.duration_ms.0 {
                self.model_time_ms += d;
                self.saw_model_time = true;
            }
        }
    }

    /// The `models` section; `None` when no non-echoed assistant turn was seen.
    pub fn finish(self, prices: &PriceTable) -> Option<Models> {
        if self.assistant_turns == 0 {
            return None;
        }
        let mut per_model = Vec::new();
        let mut unpriced = Vec::new();
        let (mut total_usd, mut any_priced) = (0.0, false);
        let mut sum = ModelSlot::default();
        for (model, s) in &self.by_model {
            let price = prices.lookup(model);
            let cost = s.cost(price);
            if price.is_none() && s.usage_turns > 0 {
                unpriced.push(model.clone());
            }
            if let Some(c) = cost {
                any_priced = true;
                total_usd += c;
            }
            per_model.push(s.row(model, cost, price.is_some()));
            sum.absorb(s);
        }
        per_model.sort_by(|a, b| b.calls.cmp(&a.calls).then_with(|| a.model.cmp(&b.model)));
        unpriced.sort();
        let summary = self.summary(&sum, per_model.len() as u64);
        let cost = Cost {
            estimated: true,
            currency: "USD",
            total_usd: any_priced.then_some(total_usd),
            partial: any_priced && !unpriced.is_empty(),
            unpriced_models: unpriced,
            as_of: Some(prices.as_of.clone()),
            source: prices.source.clone(),
        };
        Some(Models {
            per_model,
            summary,
            cost,
        })
    }

    /// The summary over every model, `sum` holding their slots added up.
    fn summary(&self, sum: &ModelSlot, models: u64) -> ModelSummary {
        let any_usage = sum.usage_turns > 0;
        ModelSummary {
            models,
            assistant_turns: self.assistant_turns,
            turns: self.turns,
            echoed_turns: self.echoed_turns,
            input_tokens: any_usage.then_some(sum.input),
            output_tokens: any_usage.then_some(sum.output),
            cache_read_tokens: (sum.cache_read_turns > 0).then_some(sum.cache_read),
            cache_creation_tokens: (sum.cache_creation_turns > 0).then_some(sum.cache_creation),
            thinking_exact_tokens: (sum.thinking_exact > 0.0).then_some(sum.thinking_exact),
            thinking_estimated_tokens: (sum.thinking_estimated > 0.0)
                .then_some(sum.thinking_estimated),
            cache_hit_rate: hit_rate(
                sum.cache_read,
                sum.input,
                sum.cache_creation,
                sum.cache_turns > 0,
            ),
            total_model_time_ms: self.saw_model_time.then_some(self.model_time_ms),
        }
    }
}

impl ModelSlot {
    /// The estimated cost of this model's tokens at `price`; `None` when it is not
    /// priced, or no turn reported usage, or every count is zero.
    fn cost(&self, price: Option<&Price>) -> Option<f64> {
        let p = price.filter(|_| self.usage_turns > 0)?;
        let has_tokens = self.input != 0.0
            || self.output != 0.0
            || self.cache_read != 0.0
            || self.cache_creation != 0.0;
        has_tokens.then(|| {
            p.cost(
                self.input,
                self.output,
                self.cache_read,
                self.cache_creation,
            )
        })
    }

    /// The model's row of the `models` section.
    fn row(&self, model: &str, cost: Option<f64>, priced: bool) -> ModelRow {
        let thinking = self.thinking_exact + self.thinking_estimated;
        ModelRow {
            model: model.to_owned(),
            calls: self.calls,
            input_tokens: (self.usage_turns > 0).then_some(self.input),
            output_tokens: (self.usage_turns > 0).then_some(self.output),
            cache_read_tokens: (self.cache_read_turns > 0).then_some(self.cache_read),
            cache_creation_tokens: (self.cache_creation_turns > 0).then_some(self.cache_creation),
            thinking_tokens: (thinking > 0.0).then_some(thinking),
            thinking_estimated: self.thinking_estimated > 0.0,
            cache_hit_rate: hit_rate(
                self.cache_read,
                self.input,
                self.cache_creation,
                self.cache_turns > 0,
            ),
            ttft_p50_ms: self.ttft.percentile(50),
            ttft_p95_ms: self.ttft.percentile(95),
            est_cost_usd: cost,
            priced,
        }
    }

    /// Adds `s`'s token sums and counts of reporting turns (not its calls or TTFTs) to
    /// these, for the summary.
    fn absorb(&mut self, s: &ModelSlot) {
        self.input += s.input;
        self.output += s.output;
        self.cache_read += s.cache_read;
        self.cache_creation += s.cache_creation;
        self.usage_turns += s.usage_turns;
        self.cache_turns += s.cache_turns;
        self.cache_read_turns += s.cache_read_turns;
        self.cache_creation_turns += s.cache_creation_turns;
        self.thinking_exact += s.thinking_exact;
        self.thinking_estimated += s.thinking_estimated;
    }
}

/// Thinking tokens estimated from `chars` UTF-16 code units of thinking text (the
/// reference counts JavaScript string length): chars / 4 rounded half up, at least 1.
fn estimate_thinking_tokens(chars: usize) -> f64 {
    ((chars + 2) / 4).max(1) as f64
}

/// cache read / (input + cache read + cache creation); `None` when no turn reported a
/// cache field or the denominator is not positive.
fn hit_rate(read: f64, input: f64, creation: f64, reported: bool) -> Option<f64> {
    let denom = input + read + creation;
    (reported && denom > 0.0).then(|| read / denom)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thinking_estimate_rounds_half_up_with_a_floor_of_one() {
        assert_eq!(estimate_thinking_tokens(1), 1.0);
        assert_eq!(estimate_thinking_tokens(2), 1.0);
        assert_eq!(estimate_thinking_tokens(6), 2.0);
        assert_eq!(estimate_thinking_tokens(9), 2.0);
        assert_eq!(estimate_thinking_tokens(10), 3.0);
    }

    #[test]
    fn hit_rate_is_null_without_reports_or_tokens() {
        assert_eq!(hit_rate(0.0, 10.0, 0.0, false), None);
        assert_eq!(hit_rate(0.0, 0.0, 0.0, true), None);
        assert_eq!(hit_rate(30.0, 60.0, 10.0, true), Some(0.3));
    }
}
