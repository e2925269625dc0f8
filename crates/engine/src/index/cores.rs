//! Work split over the machine's cores (up to four, within `--max-indexing-threads`), in
//! order, on threads named `quarry-index-N`.

use api_types::Result;
use std::sync::mpsc;

fn cores() -> usize {
    crate::indexing::worker_threads()
}

/// Starts `f` on a thread of `scope` named `quarry-index-{n}`.
fn spawn<'scope, R: Send + 'scope>(
    scope: &'scope std::thread::Scope<'scope, '_>,
    n: usize,
    f: impl FnOnce() -> R + Send + 'scope,
) -> std::thread::ScopedJoinHandle<'scope, R> {
    std::thread::Builder::new()
        .name(format!("quarry-index-{n}"))
        .spawn_scoped(scope, f)
        .expect("a worker thread could not be started")
}

/// `f` over `items` cut into one run per core, the runs' results in order; one run, on this
/// thread, when `items` are fewer than `min` or the machine has one core.
pub(crate) fn on_cores<T: Sync, R: Send>(
    items: &[T],
    min: usize,
    f: impl Fn(&[T]) -> R + Sync,
) -> Vec<R> {
    let threads = cores();
    if threads == 1 || items.len() < min.max(2) {
        return vec![f(items)];
    }
    let part = items.len().div_ceil(threads);
    let f = &f;
    std::thread::scope(|scope| {
        let handles: Vec<_> = items
            .chunks(part)
            .enumerate()
            .map(|(n, run)| spawn(scope, n, move || f(run)))
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("a worker thread panicked"))
            .collect()
    })
}

/// `f` over `items` a `chunk` at a time on every core while this thread hands each chunk's
/// result, in order, to `take` (which stops everything by failing).
pub(crate) fn pipelined<T: Sync, R: Send>(
    items: &[T],
    chunk: usize,
    f: impl Fn(&[T]) -> R + Sync,
    mut take: impl FnMut(R, &[T]) -> Result<()>,
) -> Result<()> {
    let chunks: Vec<&[T]> = items.chunks(chunk.max(1)).collect();
    let workers = cores().min(chunks.len());
    if workers <= 1 {
        return chunks.iter().try_for_each(|c| take(f(c), c));
    }
    let (f, chunks) = (&f, &chunks);
    std::thread::scope(|scope| {
        // Worker `w` does chunks `w`, `w + workers`, …, each sent as it ends (one waits).
        let results: Vec<mpsc::Receiver<R>> = (0..workers)
            .map(|w| {
                let (send, receive) = mpsc::sync_channel(1);
                spawn(scope, w, move || {
                    for c in chunks.iter().skip(w).step_by(workers) {
                        if send.send(f(c)).is_err() {
                            return;
                        }
                    }
                });
                receive
            })
            .collect();
        for (i, c) in chunks.iter().enumerate() {
            let r = results[i % workers]
                .recv()
                .expect("a worker thread panicked");
            take(r, c)?;
        }
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::{on_cores, pipelined};

    #[test]
    fn runs_come_back_in_order_and_cover_every_item() {
        let items: Vec<u32> = (0..10_001).collect();
        let sums = on_cores(&items, 100, |run| run.to_vec());
        assert_eq!(sums.concat(), items);
        assert_eq!(on_cores(&items[..5], 100, |run| run.len()), vec![5]);
        assert_eq!(on_cores(&[] as &[u32], 0, |run| run.len()), vec![0]);
    }

    #[test]
    fn pipelined_chunks_are_taken_in_order_and_a_failure_stops_them() {
        let items: Vec<u32> = (0..10_001).collect();
        let mut seen = Vec::new();
        pipelined(
            &items,
            64,
            |c| c.iter().map(|x| x * 2).collect::<Vec<_>>(),
            |r, c| {
                assert_eq!(r.len(), c.len());
                seen.extend(r);
                Ok(())
            },
        )
        .unwrap();
        assert_eq!(seen, items.iter().map(|x| x * 2).collect::<Vec<_>>());
        let mut taken = 0;
        let failed = pipelined(
            &items,
            64,
            |c| c.len(),
            |_, _| {
                taken += 1;
                match taken {
                    3 => Err(api_types::Error::internal("stop")),
                    _ => Ok(()),
                }
            },
        );
        assert!(failed.is_err());
        assert_eq!(taken, 3);
    }
}
