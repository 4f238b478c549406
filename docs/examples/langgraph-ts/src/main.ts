// killpoint's side of the agent: the worker's environment, the hook and the clock over HTTP,
// LangGraph's saver reporting its writes, the status line and the history.
//   node dist/main.js naive|keyed   start the workflow, or resume its thread; one status line
//   node dist/main.js history       the thread's checkpoints, as killpoint's records
import { readFileSync } from "node:fs";
import Database from "better-sqlite3";
import { SqliteSaver } from "@langchain/langgraph-checkpoint-sqlite";
import { buildGraph, initialDoc, type Doc, type Variant } from "./agent.js";

const env = process.env as Record<string, string>;
async function call(url: string, body?: object): Promise<any> {
  const answer = await fetch(url, body && { method: "POST", body: JSON.stringify(body) });
  if (!answer.ok) throw new Error(`${url}: ${answer.status} ${await answer.text()}`);
  return answer.json();
}
let node = ""; // the node running, or run last: the saver's next writes are its checkpoint
const world = {
  payments: env.KILLPOINT_PAYMENTS_URL,
  publisher: env.KILLPOINT_PUBLISHER_URL,
  hook: (boundary: string, step: string) =>
    call(env.KILLPOINT_HOOK_URL, { boundary, step: (node = step) }),
  now: async () => (await call(env.KILLPOINT_CLOCK_URL)).now as number,
  sleep: (seconds: number) => call(env.KILLPOINT_CLOCK_URL, { sleep: seconds }),
};

// Each durable write between `checkpoint.built` and `checkpoint.committed`, one at a time (so
// the hits come in one order on every run); the input's own write belongs to no node.
class HookedSaver extends SqliteSaver {
  private last: Promise<unknown> = Promise.resolve();
  private around<T>(write: () => Promise<T>): Promise<T> {
    const step = node;
    const done = this.last.then(async () => {
      if (step) await world.hook("checkpoint.built", step);
      const result = await write();
      if (step) await world.hook("checkpoint.committed", step);
      return result;
    });
    this.last = done.catch(() => undefined);
    return done;
  }
  put(...args: Parameters<SqliteSaver["put"]>) {
    return this.around(() => super.put(...args));
  }
  putWrites(...args: Parameters<SqliteSaver["putWrites"]>) {
    return this.around(() => super.putWrites(...args));
  }
}

const saver = new HookedSaver(new Database(`${env.KILLPOINT_WORKDIR}/langgraph.sqlite`));
const thread = { configurable: { thread_id: env.KILLPOINT_WORKFLOW_ID } };

if (env.KILLPOINT_ACTION === "history") {
  // LangGraph's steps -1, 0, 1, … as sequence 1, 2, 3, …: a forked thread repeats a number
  const found = [];
  for await (const { checkpoint, metadata } of saver.list(thread)) {
    const values = checkpoint.channel_values as any;
    const doc: Doc | undefined = values.doc ?? values.__start__?.doc; // step -1: the input
    if (doc) found.push({ step: metadata!.step, id: checkpoint.id, doc });
  }
  found.sort((a, b) => a.step - b.step || a.id.localeCompare(b.id));
  for (const { step, doc } of found) {
    const { state, status, reason, outputs, at } = doc;
    const record = { sequence: step + 2, state, status, reason, outputs, created_at: at };
    console.log(JSON.stringify({ record: "checkpoint", ...record }));
  }
} else {
  const app = buildGraph(process.argv[2] as Variant, world).compile({ checkpointer: saver });
  const stored = await saver.getTuple(thread);
  if (!stored && !env.KILLPOINT_INPUT) throw new Error("no thread and no start message");
  const input = stored ? null : JSON.parse(readFileSync(env.KILLPOINT_INPUT, "utf8"));
  // a new thread starts from the input; null resumes the thread from its last checkpoint
  const start = input && { doc: initialDoc(input, await world.now()) };
  await app.invoke(start, { ...thread, durability: "sync" });
  const { values, metadata } = await app.getState(thread);
  const { status, state, reason } = values.doc as Doc;
  const said = { status, state, sequence: metadata!.step + 2, reason };
  console.log("killpoint-status " + JSON.stringify(said));
}
