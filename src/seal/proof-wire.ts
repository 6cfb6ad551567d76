// The proof's words, shared by init (which asks and listens) and the node agent (which connects): the request
// path, the nonce's form, and the one line each side writes on the proof connection. Pure.

/** init -> agent: `GET /prove?nonce=<32 hex digits>` on the node's address. */
export const PROVE_PATH = '/prove';
const NONCE = /^[0-9a-f]{32}$/;

export function isNonce(text: string | null | undefined): text is string {
  return text !== null && text !== undefined && NONCE.test(text);
}

/** The nonce of a request target (`/prove?nonce=...`), or why there is none. */
export function nonceOfTarget(target: string): { nonce: string } | { refused: string } {
  const url = new URL(target, 'http://agent.invalid');
  if (url.pathname !== PROVE_PATH)
    return { refused: `unknown path ${url.pathname}; the one path is ${PROVE_PATH}` };
  const nonce = url.searchParams.get('nonce');
  if (!isNonce(nonce)) return { refused: 'nonce must be 32 lowercase hex digits' };
  return { nonce };
}

/** What init writes back on the proof connection: the address it saw the agent's connection come from. */
export function seenLine(from: string): string {
  return `seen ${from}\n`;
}

/** The address in init's `seen` line, if that is what the line is. */
export function parseSeenLine(line: string): string | undefined {
  const match = /^seen ([0-9a-fA-F.:]{2,45})$/.exec(line.trim());
  return match?.[1];
}
