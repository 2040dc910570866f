/** At most `max` calls in flight at once; the rest wait their turn, in order. */
export function createLimiter(max: number): <T>(fn: () => Promise<T>) => Promise<T> {
  let inFlight = 0;
  const waiting: (() => void)[] = [];
  return async <T>(fn: () => Promise<T>): Promise<T> => {
    // A finishing call hands its slot straight to the next waiter.
    if (inFlight < max) inFlight++;
    else await new Promise<void>((resolve) => waiting.push(resolve));
    try {
      return await fn();
    } finally {
      const next = waiting.shift();
      if (next) next();
      else inFlight--;
    }
  };
}
