//! A vendor's quota as vendors count it: at most `requests` in any window of
//! `per`, wherever the window falls (a sliding window). A plain GCRA at one
//! request every `per / requests` admits `requests + 1` in some windows
//! (at 3/s: 0, 333, 666 and 999 ms), and network jitter can bring requests
//! sent further apart closer together by the time they arrive. So requests
//! are spaced for a window `margin` longer than the vendor's: a request may
//! then arrive up to `margin` later than those before it and the vendor
//! still counts no more than `requests` in any of its windows.
//!
//! For GCRA with burst `b` and interval `T`, any stretch of time `W` holds
//! fewer than `b + W/T` admissions. With `T = window / (capacity − b + 1)`
//! that is fewer than `capacity + 1` in any stretch of `window`.

use std::time::Duration;

/// How to space requests so that a window holds at most `capacity`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Spacing {
    /// Time between requests at the sustained rate.
    pub interval: Duration,
    /// Requests allowed at once, at most the capacity.
    pub burst: u32,
}

/// Spacing for `capacity` requests in any `window`, `burst` of them at once.
/// `None` when the capacity is zero: nothing may be sent.
pub fn spacing(capacity: u32, burst: u32, window: Duration) -> Option<Spacing> {
    if capacity == 0 {
        return None;
    }
    let burst = burst.clamp(1, capacity);
    let gaps = u128::from(capacity - burst + 1);
    // Rounded up: an interval a nanosecond short would let one more through.
    let nanos = window.as_nanos().div_ceil(gaps).max(1);
    let interval = Duration::from_nanos(u64::try_from(nanos).unwrap_or(u64::MAX));
    Some(Spacing { interval, burst })
}

/// The margin a quota gets when its config names none: a tenth of its
/// window, at most a second (jitter on a network path is milliseconds to
/// hundreds of them; a longer window need not give up more).
pub fn default_margin(per: Duration) -> Duration {
    (per / 10).min(Duration::from_secs(1))
}

/// The local limiter for such a spacing.
pub fn governor_quota(spacing: Spacing) -> Option<governor::Quota> {
    let burst = std::num::NonZeroU32::new(spacing.burst)?;
    governor::Quota::with_period(spacing.interval).map(|q| q.allow_burst(burst))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The most admissions a GCRA of this spacing makes in any stretch of
    /// `window`, found by admitting as early as it allows for a while.
    fn busiest(spacing: Spacing, window: Duration) -> usize {
        let (t, b) = (spacing.interval.as_nanos(), u128::from(spacing.burst));
        // Greedy GCRA: theoretical arrival time starts at 0; admit at
        // max(now, tat − (b − 1)·t), then tat += t.
        let mut tat: u128 = 0;
        let mut admitted = Vec::new();
        for _ in 0..200 {
            let at = tat.saturating_sub((b - 1) * t);
            admitted.push(at);
            tat = tat.max(at) + t;
        }
        let w = window.as_nanos();
        (0..admitted.len())
            .map(|i| {
                admitted[i..]
                    .iter()
                    .take_while(|a| **a - admitted[i] < w)
                    .count()
            })
            .max()
            .unwrap_or(0)
    }

    #[test]
    fn no_window_of_the_vendor_holds_more_than_its_quota() {
        let per = Duration::from_secs(1);
        for (requests, burst) in [(3, 1), (4, 1), (10, 3), (10, 10), (1, 1), (100, 7)] {
            for margin in [Duration::ZERO, Duration::from_millis(100)] {
                let s = spacing(requests, burst, per + margin).unwrap();
                assert!(
                    busiest(s, per + margin) <= requests as usize,
                    "{requests}/s burst {burst}, margin {margin:?}: {s:?}"
                );
            }
        }
    }

    #[test]
    fn a_plain_gcra_lets_one_more_through_and_this_spacing_does_not() {
        let per = Duration::from_secs(1);
        let plain = Spacing {
            interval: per / 3,
            burst: 1,
        };
        assert_eq!(busiest(plain, per), 4, "0, 333, 666 and 999 ms");
        assert_eq!(busiest(spacing(3, 1, per).unwrap(), per), 3);
    }

    #[test]
    fn the_margin_absorbs_jitter_of_up_to_itself() {
        let (per, margin) = (Duration::from_secs(1), Duration::from_millis(100));
        let s = spacing(3, 1, per + margin).unwrap();
        assert_eq!(s.interval, Duration::from_nanos(366_666_667));
        // Sent at 0 and 3 intervals later (1.1 s): arriving 100 ms apart less,
        // the vendor still sees them a full second apart.
        assert!(s.interval * 3 - margin >= per);
    }

    #[test]
    fn bursts_are_bounded_by_the_capacity_and_no_capacity_sends_nothing() {
        let s = spacing(2, 5, Duration::from_secs(1)).unwrap();
        assert_eq!((s.burst, s.interval), (2, Duration::from_secs(1)));
        assert_eq!(spacing(0, 1, Duration::from_secs(1)), None);
        assert_eq!(
            default_margin(Duration::from_secs(1)),
            Duration::from_millis(100)
        );
        assert_eq!(
            default_margin(Duration::from_secs(60)),
            Duration::from_secs(1)
        );
    }
}
