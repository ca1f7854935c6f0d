// The service's public HTTP API, as any client would call it: every request carries the
// x-api-key header; errors are {"error": {"code", "message", "details"?}}.

const KEY_STORAGE = "captions.apiKey";

export class ApiError extends Error {
  constructor(status, code, message, details) {
    super(message);
    this.status = status;
    this.code = code;
    this.details = details || [];
  }
}

export function savedKey() {
  return localStorage.getItem(KEY_STORAGE) || "";
}

export function saveKey(key) {
  localStorage.setItem(KEY_STORAGE, key);
}

export function forgetKey() {
  localStorage.removeItem(KEY_STORAGE);
}

async function failure(response) {
  let code = "http_" + response.status;
  let message = `${response.status} ${response.statusText}`;
  let details = [];
  try {
    const body = await response.json();
    if (body && body.error) {
      code = body.error.code || code;
      message = body.error.message || message;
      details = body.error.details || [];
    }
  } catch {
    // Not JSON (a proxy's page): the status line says enough.
  }
  return new ApiError(response.status, code, message, details);
}

/** Listeners told when the service refuses the key (401). */
const unauthorizedListeners = [];
export function onUnauthorized(listener) {
  unauthorizedListeners.push(listener);
}

export async function call(method, path, { body, signal, as = "json", key = savedKey() } = {}) {
  const headers = { "x-api-key": key };
  if (body !== undefined) headers["content-type"] = "application/json";
  const response = await fetch("/v1" + path, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
    signal,
  });
  if (!response.ok) {
    const error = await failure(response);
    if (response.status === 401) unauthorizedListeners.forEach((l) => l(error));
    throw error;
  }
  return as === "blob" ? response.blob() : response.json();
}

export const api = {
  templates: (opts) => call("GET", "/templates", opts),
  template: (id) => call("GET", "/templates/" + encodeURIComponent(id)),
  fonts: (lang) => call("GET", "/fonts?lang=" + encodeURIComponent(lang)),
  signedUrl: (name) => call("GET", "/signedUrl?fileName=" + encodeURIComponent(name)),
  transcribe: (input, lang) => call("POST", "/transcript", { body: { input, lang } }),
  transcript: (jobId) => call("GET", "/transcript/" + encodeURIComponent(jobId)),
  generate: (request) => call("POST", "/generate", { body: { ...request, async: true } }),
  generateJob: (jobId) => call("GET", "/generate/" + encodeURIComponent(jobId)),
  preview: (request, signal) => call("POST", "/preview", { body: request, signal, as: "blob" }),
};

/** The largest size the descriptor's signed policy admits, or null when it does not say. */
export function policyMaxBytes(descriptor) {
  try {
    const policy = JSON.parse(atob(descriptor.fields.Policy || descriptor.fields.policy || ""));
    for (const condition of policy.conditions || []) {
      if (Array.isArray(condition) && condition[0] === "content-length-range") {
        return Number(condition[2]);
      }
    }
  } catch {
    // An unreadable policy: the storage will still refuse a file that is too large.
  }
  return null;
}

/**
 * Uploads `file` straight to storage with the descriptor's form fields (file last), reporting
 * progress from 0 to 1. Resolves when the storage answers 2xx.
 */
export function upload(descriptor, file, onProgress) {
  return new Promise((resolve, reject) => {
    const form = new FormData();
    for (const [name, value] of Object.entries(descriptor.fields)) form.append(name, value);
    form.append("file", file, file.name);
    const xhr = new XMLHttpRequest();
    xhr.open("POST", descriptor.url);
    xhr.upload.addEventListener("progress", (event) => {
      if (event.lengthComputable) onProgress(event.loaded / event.total);
    });
    xhr.addEventListener("load", () => {
      if (xhr.status >= 200 && xhr.status < 300) {
        onProgress(1);
        resolve();
      } else {
        const text = xhr.responseText || "";
        const message = /<Message>([^<]*)<\/Message>/.exec(text);
        reject(new ApiError(xhr.status, "upload_failed",
          "The storage refused the upload: " + (message ? message[1] : xhr.status)));
      }
    });
    xhr.addEventListener("error", () =>
      reject(new ApiError(0, "network", "The upload could not reach the storage.")));
    xhr.send(form);
  });
}

/** Polls `read` every `intervalMs` until its status is COMPLETED or FAILED. */
export async function poll(read, onUpdate, intervalMs = 600) {
  for (;;) {
    const job = await read();
    onUpdate(job);
    if (job.status === "COMPLETED" || job.status === "FAILED") return job;
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}
