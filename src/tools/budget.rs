//! List pages within the answer token budget (`limits.max_result_tokens`).
//!
//! `limit` counts items, but what a host caps and a model pays for is tokens:
//! twenty detailed vehicles cost more than a hundred short events. A page
//! that would go over the budget stops at the last item that fits, and its
//! cursor goes on from the first item left out, so paging loses nothing.

use serde::Serialize;

use super::{Handled, ToolContext};
use crate::contract::tokens;

/// What a cursor, a stale notice and the envelope may add to a page once it
/// is cut short (a cursor is a few dozen characters; see `contract::cursor`).
const ENVELOPE_MARGIN: usize = 200;

/// The answer for `items` as one page, or for the leading items that fit in
/// the budget: `answer(n)` makes the page of the first `n` items, cursor
/// included. At least one item is kept, so a cursor always moves on; an item
/// too large on its own is refused by the pipeline's size check.
pub(crate) fn fit_page<T: Serialize>(
    ctx: &ToolContext<'_>,
    items: &[T],
    answer: impl Fn(usize) -> Handled,
) -> Handled {
    let whole = answer(items.len())?;
    let budget = ctx.services.limits.max_result_tokens;
    if whole.estimated_tokens() <= budget {
        return Ok(whole);
    }
    let costs: Vec<usize> = items.iter().map(item_tokens).collect();
    let envelope = whole
        .estimated_tokens()
        .saturating_sub(costs.iter().sum::<usize>());
    answer(leading_within(
        &costs,
        budget.saturating_sub(envelope + ENVELOPE_MARGIN),
    ))
}

/// How many leading items, each with its separator, fit in `budget`; at least one.
fn leading_within(costs: &[usize], budget: usize) -> usize {
    let mut spent = 0usize;
    let fitting = costs
        .iter()
        .take_while(|cost| {
            spent += **cost + 1;
            spent <= budget
        })
        .count();
    fitting.max(1).min(costs.len())
}

fn item_tokens(item: &impl Serialize) -> usize {
    serde_json::to_string(item).map_or(0, |text| tokens::estimate(&text))
}

#[cfg(test)]
mod tests {
    use super::leading_within;

    #[test]
    fn a_page_keeps_the_leading_items_within_the_budget_and_at_least_one() {
        assert_eq!(leading_within(&[10, 10, 10], 33), 3);
        assert_eq!(leading_within(&[10, 10, 10], 32), 2);
        assert_eq!(leading_within(&[10, 10, 10], 21), 1);
        assert_eq!(leading_within(&[50, 1], 10), 1);
        assert_eq!(leading_within(&[], 10), 0);
    }
}
