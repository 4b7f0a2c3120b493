//! Joins concurrent reads of the same upstream data into one request. A caller
//! that arrives while a read is in flight waits for it and takes its result
//! (or its error) only if that read finished after the caller arrived, so the
//! answer is never older than a request the caller could have made itself.
//! This is not a cache: nothing is kept for later callers.

use std::sync::{Arc, Mutex};
use std::time::Instant;

use super::{AdapterError, InventorySnapshot};

type Outcome = Result<Arc<InventorySnapshot>, AdapterError>;

#[derive(Default)]
pub struct Flight {
    /// Held while a read is in flight; later callers queue on it.
    running: tokio::sync::Mutex<()>,
    last: Mutex<Option<(Instant, Outcome)>>,
}

impl Flight {
    pub async fn run<F>(&self, read: F) -> Outcome
    where
        F: Future<Output = Outcome>,
    {
        let arrived = Instant::now();
        let _turn = self.running.lock().await;
        if let Some(outcome) = self.finished_since(arrived) {
            return outcome;
        }
        let outcome = read.await;
        if let Ok(mut last) = self.last.lock() {
            *last = Some((Instant::now(), outcome.clone()));
        }
        outcome
    }

    fn finished_since(&self, arrived: Instant) -> Option<Outcome> {
        let last = self.last.lock().ok()?;
        let (finished, outcome) = last.as_ref()?;
        (*finished >= arrived).then(|| outcome.clone())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::time::Duration;

    // The clock is tokio's, paused: the joiners arrive 10 ms into the first
    // read's 100 ms however slowly the machine runs the tasks.
    #[tokio::test(start_paused = true)]
    async fn concurrent_reads_share_one_request_and_later_ones_do_not() {
        let flight = Arc::new(Flight::default());
        let reads = Arc::new(AtomicUsize::new(0));
        let read = |flight: Arc<Flight>, reads: Arc<AtomicUsize>| async move {
            flight
                .run(async {
                    reads.fetch_add(1, Ordering::SeqCst);
                    tokio::time::sleep(Duration::from_millis(100)).await;
                    Ok(Arc::new(InventorySnapshot::default()))
                })
                .await
        };
        let first = tokio::spawn(read(flight.clone(), reads.clone()));
        tokio::time::sleep(Duration::from_millis(10)).await;
        let joined: Vec<_> = (0..10)
            .map(|_| tokio::spawn(read(flight.clone(), reads.clone())))
            .collect();
        first.await.unwrap().unwrap();
        for j in joined {
            j.await.unwrap().unwrap();
        }
        // The ten joiners arrived while the first read was in flight and share its answer.
        assert_eq!(reads.load(Ordering::SeqCst), 1);
        read(flight.clone(), reads.clone()).await.unwrap();
        assert_eq!(
            reads.load(Ordering::SeqCst),
            2,
            "a caller arriving after the last read makes its own"
        );
    }
}
