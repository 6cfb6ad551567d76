// wait's schedule, without a clock: when it asks again, how long an attempt may take, when it gives up, and
// what it says then.

import { describe, expect, it } from 'vitest';
import { type Attempt, giveUpMessage, lastToSay, nextStep, type WaitPlan } from '../../src/wait/schedule.js';

const PLAN: WaitPlan = { timeoutMs: 1000, intervalMs: 100, attemptTimeoutMs: 300 };

describe('nextStep', () => {
  it.each([
    {
      name: 'first attempt at once',
      elapsed: 0,
      last: undefined,
      want: { action: 'attempt', timeoutMs: 300 },
    },
    {
      name: 'a failed attempt: sleep to the next slot',
      elapsed: 20,
      last: 0,
      want: { action: 'sleep', ms: 80 },
    },
    { name: 'the next slot has come', elapsed: 100, last: 0, want: { action: 'attempt', timeoutMs: 300 } },
    {
      name: 'a slow attempt used up its slot: ask again at once',
      elapsed: 350,
      last: 50,
      want: { action: 'attempt', timeoutMs: 300 },
    },
    {
      name: 'the last attempt gets only what is left',
      elapsed: 900,
      last: 800,
      want: { action: 'attempt', timeoutMs: 100 },
    },
    { name: 'a sleep never passes the timeout', elapsed: 960, last: 900, want: { action: 'sleep', ms: 40 } },
    {
      name: 'fractions of a millisecond round up',
      elapsed: 899.4,
      last: 800,
      want: { action: 'sleep', ms: 1 },
    },
    {
      name: 'and so does what is left for the last attempt',
      elapsed: 900.5,
      last: 800,
      want: { action: 'attempt', timeoutMs: 100 },
    },
    { name: 'timeout reached', elapsed: 1000, last: 900, want: { action: 'give-up' } },
    {
      name: 'timeout passed before any attempt',
      elapsed: 5000,
      last: undefined,
      want: { action: 'give-up' },
    },
  ])('$name', ({ elapsed, last, want }) => {
    expect(nextStep(PLAN, elapsed, last)).toEqual(want);
  });

  it('a whole wait against a companion that never answers: bounded, about timeout / interval attempts', () => {
    let elapsed = 0;
    let last: number | undefined;
    let attempts = 0;
    for (;;) {
      const step = nextStep(PLAN, elapsed, last);
      if (step.action === 'give-up') break;
      if (step.action === 'sleep') elapsed += step.ms;
      else {
        last = elapsed;
        attempts += 1;
        elapsed += 1; // refused at once
      }
    }
    expect(attempts).toBe(10);
    expect(elapsed).toBe(1000);
  });
});

describe('giveUpMessage', () => {
  const url = 'http://127.0.0.1:15904/healthz';
  it.each<{ name: string; attempts: number; last: Attempt | undefined; want: string }>([
    {
      name: 'refused',
      attempts: 3,
      last: { ok: false, reason: 'connect ECONNREFUSED 127.0.0.1:15904', timedOut: false },
      want: `the companion did not answer 200 on ${url} within 1 s (3 attempts); last: connect ECONNREFUSED 127.0.0.1:15904`,
    },
    {
      name: 'one attempt',
      attempts: 1,
      last: { ok: false, reason: 'answered 503: not ready', timedOut: false },
      want: `the companion did not answer 200 on ${url} within 1 s (1 attempt); last: answered 503: not ready`,
    },
    {
      name: 'no attempt',
      attempts: 0,
      last: undefined,
      want: `the companion did not answer 200 on ${url} within 1 s (0 attempts); last: no attempt finished`,
    },
  ])('$name', ({ attempts, last, want }) => {
    expect(giveUpMessage(url, PLAN, attempts, last)).toBe(want);
  });
});

describe('lastToSay', () => {
  const plan = { timeoutMs: 1_500, intervalMs: 100, attemptTimeoutMs: 1_000 };
  const refused: Attempt = { ok: false, reason: 'connect ECONNREFUSED 127.0.0.1:15904', timedOut: false };
  const busy: Attempt = { ok: false, reason: 'answered 503: not ready', timedOut: false };
  const silent = (ms: number): Attempt => ({
    ok: false,
    reason: `no answer within ${ms} ms`,
    timedOut: true,
  });
  it.each<{ name: string; previous: Attempt | undefined; latest: Attempt; ms: number; want: Attempt }>([
    {
      name: "the wait's last 3 ms passed in silence: the 503 before",
      previous: busy,
      latest: silent(3),
      ms: 3,
      want: busy,
    },
    {
      name: 'a whole attempt passed in silence: that silence',
      previous: busy,
      latest: silent(1_000),
      ms: 1_000,
      want: silent(1_000),
    },
    {
      name: 'cut short, but nothing before it: the silence',
      previous: undefined,
      latest: silent(3),
      ms: 3,
      want: silent(3),
    },
    {
      name: 'cut short, refused before: the refusal',
      previous: refused,
      latest: silent(3),
      ms: 3,
      want: refused,
    },
    {
      name: 'cut short, but an answer came: that answer',
      previous: refused,
      latest: busy,
      ms: 3,
      want: busy,
    },
    { name: 'a 200 is always the latest', previous: busy, latest: { ok: true }, ms: 3, want: { ok: true } },
  ])('$name', ({ previous, latest, ms, want }) => {
    expect(lastToSay(plan, previous, latest, ms)).toEqual(want);
  });
});
