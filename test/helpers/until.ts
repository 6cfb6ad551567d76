// Waiting for what a real API server does a moment after it is asked (an informer sees a new object, a webhook
// configuration takes effect): ask again every 200 ms up to a bound, then fail naming what never came.

const EVERY_MS = 200;

/** Resolves once `done` says so; throws `what: not within N s` and `detail()` (a process's output) after `ms`. */
export async function until(
  what: string,
  done: () => Promise<boolean | undefined>,
  detail: () => string = () => '',
  ms = 20_000,
): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await done())) {
    if (Date.now() > deadline) throw new Error(`${what}: not within ${ms / 1000} s\n${detail()}`.trimEnd());
    await new Promise((resolve) => setTimeout(resolve, EVERY_MS));
  }
}
