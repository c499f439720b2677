// A scripted OpenAI-compatible chat completions endpoint for the e2e tests, in the real
// wire format, so Lens's real client code runs. What it answers depends on the request:
// - after tool results: "Finished: <the last result>";
// - a question starting "Import the report": two tool calls, run_bash writing report.txt
//   and import_sandbox_file putting it into the "Reports" namespace;
// - a question starting "Make the table": run_bash writing table.csv, three rows;
// - a question carrying a page (the page assistant): "The page says: <its first line>";
// - anything else: "word1 word2 …", one word every 150 ms, for 200 words.
// When asked for usage (stream_options.include_usage), the last chunk reports it as
// OpenAI does: prompt tokens a quarter of the request's characters, a token per chunk.
// Usage: node fake-model.mjs PORT [ADDRESS]  (127.0.0.1 unless an address is given: a
// Lens in a container reaches it on its network's host side, scripts/compose-sandbox)
import http from 'node:http';

const port = Number(process.argv[2] ?? 8182);
const address = process.argv[3] ?? '127.0.0.1';

let usageFor = null; // set per request: the usage chunk for a turn of n chunks

function send(res, chunks, everyMs) {
  if (usageFor) chunks = [...chunks, usageFor(chunks.length - 1)];
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  let n = 0;
  const timer = setInterval(() => {
    if (n < chunks.length) {
      res.write(`data: ${JSON.stringify(chunks[n])}\n\n`);
      n += 1;
      return;
    }
    res.end('data: [DONE]\n\n');
    clearInterval(timer);
  }, everyMs);
  res.on('close', () => clearInterval(timer));
}

const delta = (content) => ({ choices: [{ index: 0, delta: { content } }] });
const stop = (reason) => ({ choices: [{ index: 0, delta: {}, finish_reason: reason }] });

function text(res, words, everyMs) {
  send(res, [...words.map(delta), stop('stop')], everyMs);
}

function toolCalls(res, calls) {
  const chunks = calls.map(([name, args], index) => ({
    choices: [{ index: 0, delta: { tool_calls: [{ index, id: `call_${index + 1}`, type: 'function',
      function: { name, arguments: JSON.stringify(args) } }] } }],
  }));
  send(res, [...chunks, stop('tool_calls')], 20);
}

function answer(res, request) {
  const messages = Array.isArray(request.messages) ? request.messages : [];
  const last = messages[messages.length - 1] ?? {};
  const lastUser = [...messages].reverse().find((m) => m.role === 'user');
  const asked = typeof lastUser?.content === 'string' ? lastUser.content : '';
  if (last.role === 'tool') {
    return text(res, [`Finished: ${last.content}`], 20);
  }
  if (asked.startsWith('Import the report')) {
    return toolCalls(res, [
      ['run_bash', { command: 'echo "Quarterly revenue grew 12 percent." > report.txt' }],
      ['import_sandbox_file', { path: 'report.txt', namespace: 'Reports' }],
    ]);
  }
  if (asked.startsWith('Make the table')) {
    return toolCalls(res, [['run_bash', { command: "printf 'city,people\\nLyon,522000\\nNantes,320000\\n' > table.csv" }]]);
  }
  const page = asked.split('\n<page>\n')[1];
  if (page !== undefined) {
    return text(res, ['The page says: ', page.split('\n')[0]], 20);
  }
  const words = Array.from({ length: 200 }, (_, i) => `word${i + 1} `);
  return text(res, words, 150);
}

let helperCalls = 0;

const server = http.createServer((req, res) => {
  if (req.url === '/healthz') {
    res.writeHead(200).end('ok');
    return;
  }
  if (req.method === 'GET' && req.url.endsWith('/models')) {
    res.writeHead(200, { 'content-type': 'application/json' }).end('{"object":"list","data":[{"id":"scripted","object":"model"}]}');
    return;
  }
  // Also the host helper Lens is given (LENS_HOST_HELPER): it counts the calls that
  // would start the Compose sandbox profile, and says how many.
  if (req.method === 'POST' && req.url === '/helper/v1/compose/up') {
    helperCalls += 1;
    res.writeHead(200).end('started');
    return;
  }
  if (req.method === 'GET' && req.url === '/helper/calls') {
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ calls: helperCalls }));
    return;
  }
  if (req.method !== 'POST' || !req.url.endsWith('/chat/completions')) {
    res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":{"message":"no such route"}}');
    return;
  }
  let body = '';
  req.setEncoding('utf8');
  req.on('data', (chunk) => { body += chunk; });
  req.on('end', () => {
    let request = {};
    try { request = JSON.parse(body); } catch { /* an empty request gets the default answer */ }
    const prompt = Math.ceil(JSON.stringify(request.messages ?? []).length / 4);
    usageFor = request.stream_options?.include_usage
      ? (n) => ({ choices: [], usage: { prompt_tokens: prompt, completion_tokens: n, total_tokens: prompt + n } })
      : null;
    answer(res, request);
  });
});
server.listen(port, address);
