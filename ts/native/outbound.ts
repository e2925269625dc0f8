/** One request through the engine's outbound client (↔ `crates/node/src/outbound.rs`). */
import { binding } from './binding';

export interface OutboundAnswer {
  /** 0 when no answer came. */
  status: number;
  body: Buffer;
  /** Why no answer came: outside the allowed networks (nothing sent), a network failure, or no answer in time. */
  failure: 'refused' | 'transport' | 'timeout' | null;
  message: string | null;
}

/** Sends one request off the JS thread; never rejects on a network failure. */
export async function outboundRequest(
  method: string,
  url: string,
  headers: Record<string, string>,
  body: Buffer,
  timeoutMs: number,
): Promise<OutboundAnswer> {
  const a = await binding.outboundRequest(method, url, Object.entries(headers), body, timeoutMs);
  return {
    status: a.status,
    body: a.body,
    failure: (a.failure ?? null) as OutboundAnswer['failure'],
    message: a.message ?? null,
  };
}

/** The header that asks another instance for each federated hit's score runs. */
export const FEDERATION_RUNS_HEADER: string = binding.FEDERATION_RUNS_HEADER;

/** The header that asks another instance what its queries' words derive from. */
export const DERIVATION_CANDIDATES_HEADER: string = binding.DERIVATION_CANDIDATES_HEADER;
