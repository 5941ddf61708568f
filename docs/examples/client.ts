// Creates an image task, waits until it is final and downloads the result: fetch only (Node 18+).
//   tsc --strict --target es2022 --module commonjs client.ts && GESSO_URL=http://127.0.0.1:8080 GESSO_KEY=sk-... node client.js "a fox" fox.png
// Prints the final task as JSON; exits 1 (printing the API's msg) when a request is refused or the task
// fails.
import { randomUUID } from "node:crypto";
import { writeFile } from "node:fs/promises";

const url = process.env.GESSO_URL ?? "http://127.0.0.1:8080";
const key = process.env.GESSO_KEY;

/** Every answer is this envelope: code 200 on success, a msg that names the problem otherwise. */
interface Envelope<T> {
  code: number;
  msg: string;
  data: T;
}

interface Created {
  task_id: string;
  request_id: string;
  credits: number;
}

interface Task {
  task_id: string;
  task_status: 1 | 2 | 3 | 4; // queued, running, succeeded, failed (and refunded)
  task_type: "image" | "video";
  model_id: string;
  image_url: string | null;
  video_url: string | null;
  audio_url: string | null;
  credits: number;
  created_at: number;
  error: { kind: string; message: string } | null;
  progress: number | null;
  finished_at: number | null;
}

class Refused extends Error {}

async function call<T>(method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<T> {
  const answer = await fetch(url + path, {
    method,
    headers: {
      Authorization: `Bearer ${key}`,
      ...(body === undefined ? {} : { "Content-Type": "application/json" }),
      ...headers,
    },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(70_000),
  });
  const envelope = (await answer.json()) as Envelope<T>;
  if (!answer.ok) throw new Refused(`HTTP ${answer.status}: ${envelope.msg}`);
  return envelope.data;
}

async function create(prompt: string): Promise<Created> {
  // One Idempotency-Key per task you mean to create: a retry after a lost answer returns the same
  // task instead of charging twice.
  const idempotencyKey = randomUUID();
  const body = { model_id: "vendor3-image-2", prompt, aspect_ratio: "3:2" };
  for (let attempt = 1; ; ++attempt) {
    try {
      return await call<Created>("POST", "/api/v1/tasks/create", body, { "Idempotency-Key": idempotencyKey });
    } catch (e) {
      if (e instanceof Refused || attempt === 3) throw e;
      await new Promise((resolve) => setTimeout(resolve, attempt * 1000));
    }
  }
}

async function wait(taskId: string): Promise<Task> {
  // ?wait=60 answers as soon as the task is final, or after 60 s with the task as it is then.
  for (;;) {
    const task = await call<Task>("GET", `/api/v1/tasks/${taskId}?wait=60`);
    if (task.task_status === 3 || task.task_status === 4) return task;
  }
}

async function main(): Promise<number> {
  if (!key) {
    console.error("set GESSO_KEY to an sk- API key");
    return 1;
  }
  const [prompt = "a red fox in snow", out = "result.png"] = process.argv.slice(2);
  try {
    const created = await create(prompt);
    console.error(`created ${created.task_id} for ${created.credits} credits`);
    const task = await wait(created.task_id);
    console.log(JSON.stringify(task));
    if (task.task_status === 4 || task.image_url === null) {
      console.error(`task failed (${task.error?.kind}): ${task.error?.message}`);
      return 1;
    }
    // The result link is signed and expires; it needs no API key.
    const image = await fetch(task.image_url);
    await writeFile(out, Buffer.from(await image.arrayBuffer()));
    console.error(`saved ${out}`);
    return 0;
  } catch (e) {
    if (e instanceof Refused) {
      console.error(`refused: ${e.message}`);
      return 1;
    }
    throw e;
  }
}

main().then((code) => {
  process.exitCode = code;
});
