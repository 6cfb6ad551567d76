// What a soak run does, from `--soak SECONDS` and the BENCH_SOAK_* knobs: checked before anything starts, so a bad
// value is refused at once, naming the flag or variable, instead of minutes into the run.

const MAX_SECONDS = 24 * 60 * 60;

/** Each knob: its variable and its default in seconds. */
const KNOBS = {
  warmupSeconds: ['BENCH_SOAK_WARMUP_SECONDS', 120],
  sampleSeconds: ['BENCH_SOAK_SAMPLE_SECONDS', 5],
  floodEverySeconds: ['BENCH_SOAK_FLOOD_EVERY_SECONDS', 60],
  floodSeconds: ['BENCH_SOAK_FLOOD_SECONDS', 5],
  probePeriodSeconds: ['BENCH_SOAK_PROBE_PERIOD_SECONDS', 1],
};

function seconds(name, text) {
  const value = /^\d+(\.\d+)?$/.test(text) ? Number(text) : Number.NaN;
  if (!(value > 0 && value <= MAX_SECONDS))
    throw new Error(`${name}: must be a number of seconds above 0 and at most ${MAX_SECONDS}, got "${text}"`);
  return value;
}

/**
 * The soak's plan from `--soak`'s value and the environment: `{ seconds, warmupSeconds, sampleSeconds,
 * floodEverySeconds, floodSeconds, probePeriodSeconds }`. Throws an Error naming the flag or variable at fault.
 */
export function soakOptions(soak, env) {
  const options = { seconds: seconds('--soak', soak ?? '') };
  for (const [key, [name, fallback]] of Object.entries(KNOBS)) {
    options[key] = env[name] === undefined ? fallback : seconds(name, env[name]);
  }
  const { warmupSeconds, sampleSeconds, floodEverySeconds, floodSeconds } = options;
  const [every, flood, sample] = [KNOBS.floodEverySeconds[0], KNOBS.floodSeconds[0], KNOBS.sampleSeconds[0]];
  if (floodSeconds >= floodEverySeconds)
    throw new Error(`${flood}: must be shorter than ${every} (${floodEverySeconds}), got ${floodSeconds}`);
  // Each flood interval is a window whose lowest sample is one point of the slope: it needs a few samples.
  if (sampleSeconds > floodEverySeconds / 2)
    throw new Error(
      `${sample}: must be at most half of ${every} (${floodEverySeconds}), got ${sampleSeconds}`,
    );
  // A slope needs two points: two whole flood intervals after the warm-up's last one.
  const needed = Math.ceil(warmupSeconds / floodEverySeconds) * floodEverySeconds + 2 * floodEverySeconds;
  if (options.seconds < needed)
    throw new Error(
      `--soak: ${options.seconds} s leaves fewer than two ${every} (${floodEverySeconds} s) intervals after ` +
        `BENCH_SOAK_WARMUP_SECONDS (${warmupSeconds} s) to fit a slope to; give at least ${needed}`,
    );
  return options;
}
