import {
  CLIENT_CAPABILITIES_META_KEY,
  inputRequired,
  MissingRequiredClientCapabilityError,
  type InputRequest,
  type ServerContext,
} from '@modelcontextprotocol/server';
import {
  answerOf,
  capabilitiesOf,
  missingCapabilities,
  type Preflight,
  type PreflightQuestion,
} from '../../preflight.js';
import { defaultPreflightStateSeal } from '../../preflight-state.js';
import type { WireDeps } from '../adapter.js';

type Round =
  | { readonly kind: 'ask'; readonly result: Record<string, unknown> }
  | { readonly kind: 'proceed'; readonly args: Record<string, unknown> };

/**
 * One MRTR round of a preflight on the 2026-07-28 wire (SEP-2322, X-11): the retried request's
 * `requestState` is opened first (a tampered, expired or foreign one is `-32602` before the
 * preflight runs), then the preflight sees this round's answers and the state. Asking what the
 * request's client capabilities do not declare is `-32021` naming them; otherwise the questions go
 * out as an `input_required` result with the new state sealed in `requestState`. Nothing is stored.
 */
export async function preflightRound(
  preflight: Preflight,
  tool: string,
  args: Record<string, unknown>,
  ctx: ServerContext,
  deps: WireDeps,
): Promise<Round> {
  const seal = deps.preflightState ?? defaultPreflightStateSeal();
  const wire = ctx.mcpReq.requestState();
  const state = typeof wire === 'string' ? await seal.open(tool, wire, ctx) : undefined;
  const responses = ctx.mcpReq.inputResponses ?? {};
  const declared = (ctx.mcpReq.envelope as Record<string, unknown> | undefined)?.[CLIENT_CAPABILITIES_META_KEY];
  const canAsk = capabilitiesOf(declared);
  const outcome = preflight({
    tool,
    args,
    accepted: (key) => {
      const answer = answerOf(responses[key]);
      return answer?.kind === 'form' && answer.action === 'accept' ? answer.content : undefined;
    },
    answer: (key) => answerOf(responses[key]),
    state,
    canAsk,
  });
  if (outcome.kind === 'proceed') return outcome;
  const missing = missingCapabilities(outcome.questions, canAsk);
  if (Object.keys(missing).length > 0) {
    throw new MissingRequiredClientCapabilityError(
      { requiredCapabilities: missing },
      `Tool ${tool} needs input this request's client capabilities do not offer: ${Object.keys(missing).join(', ')}`,
    );
  }
  const inputRequests: Record<string, InputRequest> = {};
  for (const [key, question] of Object.entries(outcome.questions)) inputRequests[key] = inputRequestOf(question);
  const requestState = outcome.state === undefined ? undefined : await seal.seal(tool, outcome.state, ctx);
  return {
    kind: 'ask',
    result: inputRequired({ inputRequests, ...(requestState === undefined ? {} : { requestState }) }),
  };
}

type ElicitSchema = Parameters<typeof inputRequired.elicit>[0]['requestedSchema'];
type SamplingParams = Parameters<typeof inputRequired.createMessage>[0];

/** A question as an embedded input request, built with the SDK's MRTR helpers. */
function inputRequestOf(question: PreflightQuestion): InputRequest {
  switch (question.kind) {
    case 'sampling':
      return inputRequired.createMessage(question.params as unknown as SamplingParams);
    case 'roots':
      return inputRequired.listRoots();
    default:
      // The tool wrote a restricted-form JSON Schema; the SDK's type names each field kind.
      return inputRequired.elicit({
        message: question.message,
        requestedSchema: question.requestedSchema as ElicitSchema,
      });
  }
}
