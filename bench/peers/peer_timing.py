"""The timing loop every Python peer script uses, so peers are timed the same way."""
import gc
import statistics
import time


def median_time(call, reps, batch_seconds, budget_seconds=float("inf"), inspect=None):
    """Median seconds per call over `reps` samples after one untimed warm-up call.

    Calls shorter than `batch_seconds` are timed in batches of about that long (each result
    freed by the next call). After 3 samples, sampling stops once `budget_seconds` are spent.
    Returns (median, samples, inspect(first result)); `inspect` defaults to None.
    """
    out = call()
    checked = inspect(out) if inspect else None
    del out
    start = time.perf_counter()
    out = call()
    first = time.perf_counter() - start
    del out
    batch = max(1, int(batch_seconds / max(first, 1e-7)))
    times = []
    while len(times) < reps:
        gc.collect()
        start = time.perf_counter()
        done = 0
        while done < batch:  # calls slower than calibrated (a busy machine) end the batch early
            for _ in range(max(1, batch // 8)):
                out = call()
                done += 1
            if done < batch and time.perf_counter() - start > 4 * batch_seconds:
                batch = max(1, done // 4)
                break
        times.append((time.perf_counter() - start) / done)
        del out
        if len(times) >= 3 and sum(times) * batch > budget_seconds:
            break
    return statistics.median(times), len(times), checked
