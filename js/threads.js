// The prover's thread pool: wasm-bindgen-rayon's initThreadPool calls startWorkers(module,
// memory, builder) here (scripts/build-package.sh points the wasm glue at this module). Each
// thread is a module worker running thread.js, created in the static
// `new Worker(new URL("./thread.js", import.meta.url), …)` form that Vite and webpack follow,
// so a production build emits the thread worker (with the glue inside) like any other chunk.
import { WorkerStartError } from "./errors.js";
import { workerStartError } from "./internal.js";

// Referenced for as long as the pool runs: a browser may collect a worker nothing points to.
let threads = [];

export async function startWorkers(module, memory, builder) {
  const n = builder.numThreads();
  if (!(n > 0)) throw new WorkerStartError(`the thread pool needs at least one thread (asked for ${n})`);
  const init = { type: "tlsproof-thread-init", module, memory, receiver: builder.receiver() };
  const started = [];
  try {
    for (let i = 0; i < n; i++) started.push(startThread(i + 1, n, init));
    threads = await Promise.all(started.map((s) => s.ready));
  } catch (e) {
    for (const s of started) s.worker?.terminate();
    throw e;
  }
  builder.build();
}

function startThread(index, count, init) {
  const which = `thread worker ${index} of ${count} (tlsproof's thread.js)`;
  let worker;
  try {
    worker = new Worker(new URL("./thread.js", import.meta.url), { type: "module", name: "tlsproof-thread" });
  } catch (e) {
    return { ready: Promise.reject(new WorkerStartError(`${which} could not be created: ${e.message}`)) };
  }
  const ready = new Promise((resolve, reject) => {
    const done = () => { worker.onmessage = null; worker.onerror = null; };
    worker.onmessage = ({ data }) => {
      if (data?.type === "tlsproof-thread-ready") { done(); resolve(worker); }
      else if (data?.type === "tlsproof-thread-failed") { done(); reject(new WorkerStartError(`${which} failed: ${data.message}`)); }
    };
    worker.onerror = (e) => {
      e.preventDefault?.();
      done();
      reject(workerStartError(which, e));
    };
  });
  worker.postMessage(init);
  return { worker, ready };
}
