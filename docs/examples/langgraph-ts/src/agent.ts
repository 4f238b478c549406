// The order saga's happy path as a LangGraph.js StateGraph: validate the order, charge it,
// verify the charge, ship it through the publisher (the carrier), verify the shipment.
//
// The business logic of the example, and the variant under test. Everything here would be in
// the team's own agent; what killpoint needs (hook, clock, status line, history) is in main.ts.
//
// - naive: a fresh idempotency key per call (as HTTP client libraries make them), three
//   tries on an unknown outcome, nothing before a send; LangGraph resumes the thread.
// - keyed: one key per (workflow, step, operation), a hash; before every send a lookup where
//   the service answers one (payments by key; the publisher by ref: `not_found` is absent,
//   `not_visible` means it holds the publication: do not send, the verify step waits).
import { createHash, randomUUID } from "node:crypto";
import { Annotation, END, START, StateGraph } from "@langchain/langgraph";

export type Variant = "naive" | "keyed";
export type Status = "running" | "completed" | "needs_review" | "budget_exhausted" | "failed";
type Json = Record<string, any>;
export interface Doc {
  state: string;
  status: Status;
  reason: string;
  input: Json;
  outputs: Json;
  effects: Json; // a receipt per effect step: what its verify step reads back
  at: number; // the world clock when the node ended
}
export interface World {
  payments: string; // base URLs of the services
  publisher: string;
  hook: (boundary: string, step: string) => Promise<void>;
  now: () => Promise<number>;
  sleep: (seconds: number) => Promise<void>;
}

export const State = Annotation.Root({ doc: Annotation<Doc> });
const CURRENCIES = ["EUR", "USD", "GBP"];
const VERIFY_READS = 5;
const TRIES = { naive: 3, keyed: 20 }; // keyed: the scenario's attempts budget

// each state names the node that leaves it, and where that node goes
const ROUTE: Record<string, [node: string, next: string]> = {
  received: ["validate_order", "order_validated"],
  order_validated: ["charge", "charged"],
  charged: ["verify_charge", "charge_verified"],
  charge_verified: ["ship", "shipped"],
  shipped: ["verify_shipment", "delivered"],
};

class Halt extends Error {
  constructor(
    readonly status: Status,
    reason: string,
  ) {
    super(reason);
  }
}

// A service's answer: `unknown` is a lost request or answer, a 5xx, or a key still in use.
type Answer = { kind: "ok" | "not_found" | "rejected" | "unknown"; status: number; body: Json };

async function request(url: string, body?: Json, key?: string): Promise<Answer> {
  const headers: Record<string, string> = { "content-type": "application/json" };
  if (key) headers["idempotency-key"] = key;
  const init = body === undefined ? {} : { method: "POST", headers, body: JSON.stringify(body) };
  let response: Response, doc: Json;
  try {
    response = await fetch(url, init);
    doc = (await response.json()) as Json;
  } catch {
    return { kind: "unknown", status: 0, body: {} };
  }
  const { status } = response;
  const kind =
    status < 300
      ? "ok"
      : status >= 500 || doc.error === "idempotency_key_in_use"
        ? "unknown"
        : status === 404
          ? "not_found"
          : "rejected";
  return { kind, status, body: doc };
}

export function buildGraph(variant: Variant, world: World) {
  if (!(variant in TRIES)) throw new Error(`no variant ${variant}: naive or keyed`);
  const { payments, publisher, hook } = world;

  // One intent to a receipt: the whole difference between the variants.
  async function send(
    id: string,
    step: string,
    operation: string,
    post: (key: string) => Promise<Answer>,
    lookup: (key: string) => Promise<Json | null>,
  ): Promise<Json> {
    const stable = `${id}/${step}/${operation}`;
    let sends = 0;
    for (let i = 0; i < TRIES[variant]; i++) {
      const key =
        variant === "keyed"
          ? "u-" + createHash("sha256").update(stable).digest("hex").slice(0, 40)
          : randomUUID().replaceAll("-", "");
      if (variant === "keyed") {
        const found = await lookup(key);
        await hook("reconcile.looked_up", step);
        if (found) return found;
      }
      sends++;
      const answer = await post(key);
      if (answer.kind === "ok") return answer.body;
      if (answer.kind !== "unknown")
        throw new Halt("failed", `${step}: rejected: ${answer.status}`);
    }
    const [status, why] =
      variant === "keyed"
        ? (["budget_exhausted", "all %d attempts were spent"] as const)
        : (["needs_review", "outcome unknown after %d sends"] as const);
    throw new Halt(status, `${stable}: ${why.replace("%d", String(sends))}`);
  }

  // Read a postcondition until it shows, backing off on the world clock.
  async function verify(step: string, seen: () => Promise<boolean>): Promise<void> {
    for (let read = 0; read < VERIFY_READS; read++) {
      const ok = await seen();
      await hook("verify.read_done", step);
      if (ok) return;
      await world.sleep(2 ** read);
    }
    throw new Halt(
      "needs_review",
      `${step}: postcondition not visible after ${VERIFY_READS} reads`,
    );
  }

  const bodies: Record<string, (id: string, doc: Doc) => Promise<void>> = {
    async validate_order(_id, doc) {
      const { order_id, amount_cents, currency } = doc.input;
      const problem =
        !Number.isInteger(amount_cents) || amount_cents <= 0
          ? "the amount must be a positive number of cents"
          : CURRENCIES.includes(currency)
            ? null
            : `currency ${JSON.stringify(currency)} is not accepted`;
      if (problem)
        throw new Halt("needs_review", `validate_order output failed validation: ${problem}`);
      doc.outputs.validate_order = { order_id, amount_cents, currency };
    },
    async charge(id, doc) {
      const { order_id, amount_cents, currency } = doc.input;
      const charge = await send(
        id,
        "charge",
        "charge",
        (key) => request(`${payments}/charges`, { order_id, amount_cents, currency }, key),
        async (key) => {
          const found = await request(`${payments}/charges/by-key/${key}`);
          return found.kind === "ok" ? found.body : null; // unknown: the key dedupes a send
        },
      );
      doc.effects.charge = { id: charge.id, idempotency_key: charge.idempotency_key };
    },
    async verify_charge(_id, doc) {
      const { id, idempotency_key } = doc.effects.charge;
      await verify("verify_charge", async () => {
        const found = await request(`${payments}/charges/by-key/${idempotency_key}`);
        return found.kind === "ok" && found.body.id === id && found.body.status === "succeeded";
      });
    },
    async ship(id, doc) {
      const ref: string = doc.input.shipment_ref;
      const content = JSON.stringify({
        charge: doc.effects.charge.id,
        order_id: doc.input.order_id,
      });
      await send(
        id,
        "ship",
        "publish",
        (key) => request(`${publisher}/publications`, { ref, content }, key),
        async () => {
          const found = await request(`${publisher}/publications/${ref}`);
          if (found.kind === "ok" || found.body.error === "not_visible") return { ref }; // held
          if (found.body.error === "not_found") return null;
          throw new Halt(
            "needs_review",
            `ship: cannot tell if ${ref} was published (${found.status})`,
          );
        },
      );
      doc.effects.ship = { ref };
    },
    async verify_shipment(_id, doc) {
      const { ref } = doc.effects.ship;
      await verify("verify_shipment", async () => {
        return (await request(`${publisher}/publications/${ref}`)).kind === "ok";
      });
    },
  };

  // A node: the step's body on a copy of the doc, then the state it leads to (or a halt).
  const node = (name: string) => async (input: typeof State.State, config: Json) => {
    await hook("step.begin", name);
    const doc: Doc = structuredClone(input.doc);
    try {
      await bodies[name](config.configurable.thread_id, doc);
      doc.state = ROUTE[doc.state][1];
      if (doc.state === "delivered") doc.status = "completed";
    } catch (error) {
      if (!(error instanceof Halt)) throw error;
      [doc.status, doc.reason] = [error.status, error.message];
    }
    doc.at = await world.now();
    return { doc };
  };

  // after START and after every node: the node that leaves the state, or END once it stops
  const route = ({ doc }: typeof State.State): string =>
    doc.status === "running" && doc.state in ROUTE ? ROUTE[doc.state][0] : END;
  return new StateGraph(State)
    .addNode("validate_order", node("validate_order"))
    .addNode("charge", node("charge"))
    .addNode("verify_charge", node("verify_charge"))
    .addNode("ship", node("ship"))
    .addNode("verify_shipment", node("verify_shipment"))
    .addConditionalEdges(START, route)
    .addConditionalEdges("validate_order", route)
    .addConditionalEdges("charge", route)
    .addConditionalEdges("verify_charge", route)
    .addConditionalEdges("ship", route)
    .addConditionalEdges("verify_shipment", route);
}

export function initialDoc(input: Json, at: number): Doc {
  return { state: "received", status: "running", reason: "", input, outputs: {}, effects: {}, at };
}
