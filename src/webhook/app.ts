// The webhook's HTTPS routes: POST /mutate (an AdmissionReview in, one out), /healthz and /readyz. Builds the
// Fastify app and never listens: server.ts binds it and swaps certificates.

import type { Server as HttpsServer } from 'node:https';
import Fastify, { type FastifyError, type FastifyInstance, type FastifyReply } from 'fastify';
import { type ClusterView, type RewriteSettings, rewriteOptionsFor } from '../cluster/view.js';
import type { Logger } from '../log.js';
import { ManifestError } from '../rewrite/manifest-error.js';
import { LEAN_SCHEMA_CONTROLLER } from '../schema-free.js';
import { type AdmissionOutcome, failedWith } from './admission-outcome.js';
import { admit } from './admit.js';
import type { KeyPair } from './certificate.js';
import { admissionReview, parseAdmissionReview } from './review.js';

/**
 * The cluster as known at each admission (it may change meanwhile: the caches of namespace-policies.ts,
 * namespace-rules.ts, node-kubelets.ts and cluster-version.ts), and the settings from the webhook's flags.
 */
export interface WebhookAppOptions extends ClusterView, RewriteSettings {
  tls: Pick<KeyPair, 'cert' | 'key'>;
  log: Logger;
  /** Why /readyz answers 503 (starting, draining, no trusted certificate yet), or undefined when ready. */
  notReady: () => string | undefined;
  /** Stopping: every answer closes its connection, so the API server opens its next one to another replica. */
  draining: () => boolean;
  /** Told of every request to /mutate answered: what became of it, and how long it took (metrics). */
  admitted?: (outcome: AdmissionOutcome, seconds: number) => void;
}

export const MUTATE_PATH = '/mutate';

export const LIMITS = {
  // An AdmissionReview carries the whole pod, and pods with large env or annotations exist; the API server
  // itself refuses requests over 3 MiB, so 4 MiB leaves room for the review around the object.
  bodyBytes: 4 * 1024 * 1024,
  requestTimeoutMs: 10_000,
  // Longer than the API server's idle-connection timeout (Go's 90 s), so the client closes idle connections
  // first: a server-side close racing a new POST would fail that admission, and POSTs are not retried.
  keepAliveTimeoutMs: 100_000,
} as const;

export type WebhookApp = FastifyInstance<HttpsServer>;

export function buildWebhookApp(options: WebhookAppOptions): WebhookApp {
  const app = webhookFastify(options);
  const answers = admissionAnswers(app, options);
  app.post(MUTATE_PATH, async (request, reply) => admitReview(request.body, reply, options, answers));
  app.get('/healthz', async (_request, reply) => plainText(reply, 200, 'ok'));
  app.get('/readyz', async (_request, reply) => {
    const why = options.notReady();
    return why === undefined ? plainText(reply, 200, 'ok') : plainText(reply, 503, `not ready: ${why}`);
  });

  // Fastify's own refusals (invalid JSON, empty or oversized body, wrong content type) say why, with its code.
  app.setErrorHandler((err: FastifyError, _request, reply) => {
    const status = err.statusCode ?? 500;
    if (status >= 400 && status < 500) return answers.rejected(reply, status, err.message);
    options.log.error({ err }, 'request failed');
    answers.count(reply, failedWith('internal'));
    return plainText(reply, 500, `internal error: ${err.message}`);
  });
  return app;
}

/** The HTTPS instance with its limits, the drain's closing connections and our JSON parser; no route yet. */
function webhookFastify(options: WebhookAppOptions): WebhookApp {
  const app = Fastify({
    logger: false,
    https: { cert: options.tls.cert, key: options.tls.key, minVersion: 'TLSv1.2' },
    bodyLimit: LIMITS.bodyBytes,
    requestTimeout: LIMITS.requestTimeoutMs,
    keepAliveTimeout: LIMITS.keepAliveTimeoutMs,
    // The API server pools connections by the Service's name, not by pod, so it keeps sending admissions on a
    // connection to a replica that is stopping. Those are answered in full (a 503 would admit the pod without
    // its companion, failurePolicy: Ignore) and close their connection (`draining`, below).
    return503OnClosing: false,
    // No route takes a schema: Fastify need not load (nor the bundle carry) Ajv or fast-json-stringify.
    schemaController: LEAN_SCHEMA_CONTROLLER,
  });
  app.addHook('onSend', async (_request, reply) => {
    if (options.draining()) reply.header('connection', 'close');
  });

  // The API server sends application/json; Fastify's text/plain parser would hand a string to the review.
  app.removeContentTypeParser(['text/plain', 'application/json']);
  // Our own JSON parser, so a 400 says where the JSON breaks. JSON.parse makes a `__proto__` key an own data
  // property (no prototype is touched), and nothing here copies request keys by assignment.
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (_request, body, done) => {
    try {
      done(null, JSON.parse(body as string));
    } catch (err) {
      done(
        Object.assign(new Error(`body is not valid JSON: ${(err as Error).message}`), { statusCode: 400 }),
      );
    }
  });
  return app;
}

/** How long a request has taken, its count in the metrics, and the 4xx line every refusal gets. */
interface AdmissionAnswers {
  /** Milliseconds since the request's first byte, to a tenth. */
  elapsed: (reply: FastifyReply) => number;
  count: (reply: FastifyReply, outcome: AdmissionOutcome) => void;
  rejected: (reply: FastifyReply, status: number, reason: string) => FastifyReply;
}

function admissionAnswers(app: WebhookApp, options: WebhookAppOptions): AdmissionAnswers {
  // From the first byte of the request, body parsing included: what the API server waits for.
  const started = new WeakMap<object, number>();
  app.addHook('onRequest', async (request) => {
    started.set(request.raw, performance.now());
  });
  const elapsedMs = (reply: FastifyReply): number =>
    performance.now() - (started.get(reply.request.raw) ?? performance.now());
  const elapsed = (reply: FastifyReply): number => Math.round(elapsedMs(reply) * 10) / 10;
  const count = (reply: FastifyReply, outcome: AdmissionOutcome): void => {
    if (reply.request.url.split('?', 1)[0] === MUTATE_PATH)
      options.admitted?.(outcome, elapsedMs(reply) / 1000);
  };
  const rejected = (reply: FastifyReply, status: number, reason: string): FastifyReply => {
    options.log.warn({ status, reason, durationMs: elapsed(reply) }, 'admission request rejected');
    count(reply, failedWith('bad_request'));
    return plainText(reply, status, `bad request: ${reason}`);
  };
  return { elapsed, count, rejected };
}

/** POST /mutate: the review read, the pod rewritten with what is known of the cluster now, one log line. */
function admitReview(
  body: unknown,
  reply: FastifyReply,
  options: WebhookAppOptions,
  answers: AdmissionAnswers,
): FastifyReply {
  const parsed = parseAdmissionReview(body);
  if (!parsed.ok) return answers.rejected(reply, 400, parsed.reason);
  const { uid, namespace, operation, nodeName } = parsed.request;
  const rewrite = rewriteOptionsFor(options, options, { namespace, nodeName });
  const { response, summary, outcome, error } = admit(parsed.request, rewrite);
  answers.count(reply, outcome);
  // summary.warnings: all of them, where the response may carry fewer, shortened (src/webhook/warnings.ts).
  const fields = { uid, namespace, ...summary, operation, durationMs: answers.elapsed(reply) };
  // One line per admission, whatever happened; the level says how much it matters.
  const { log } = options;
  if (error === undefined) log.info(fields, 'admission');
  else if (error instanceof ManifestError) log.warn(fields, 'admission');
  else log.error({ ...fields, err: error }, 'admission');
  return reply.code(200).send(admissionReview(response));
}

const plainText = (reply: FastifyReply, status: number, line: string): FastifyReply =>
  reply.code(status).header('content-type', 'text/plain; charset=utf-8').send(`${line}\n`);
