//! Work handed to the rayon pool while the caller goes on awaiting messages: a protocol step
//! whose computation does not feed its next message (the LPN encoding of a Ferret iteration
//! while the check's last message travels) overlaps the round trip instead of following it.

use futures::channel::oneshot;
use std::future::Future;

/// Starts `job` on the rayon pool at once (natively its threads, in the browser its Web
/// Workers) and returns a future of its output; `None` if the job panicked. Dropping the
/// future does not stop the job, and its output is then dropped where it ran: callers await
/// it on every path they return by, and a job holding secrets returns them in wrappers that
/// wipe them on drop, for a caller that is itself dropped meanwhile.
pub(crate) fn on_pool<T: Send + 'static>(job: impl FnOnce() -> T + Send + 'static) -> impl Future<Output = Option<T>> {
    let (tx, rx) = oneshot::channel();
    rayon::spawn(move || {
        // a panic that escaped a spawned job would abort the process
        if let Ok(out) = std::panic::catch_unwind(std::panic::AssertUnwindSafe(job)) {
            let _ = tx.send(out);
        }
    });
    async move { rx.await.ok() }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn the_job_starts_before_it_is_awaited_and_hands_back_its_output() {
        let (started, has_started) = std::sync::mpsc::channel();
        let job = on_pool(move || {
            let _ = started.send(());
            42
        });
        has_started.recv_timeout(Duration::from_secs(30)).expect("the job runs while the caller does other things");
        assert_eq!(futures::executor::block_on(job), Some(42));
    }

    #[test]
    fn a_job_that_panics_resolves_to_none() {
        assert_eq!(futures::executor::block_on(on_pool(|| -> u8 { panic!("job failed") })), None);
    }
}
