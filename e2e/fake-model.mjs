// A scripted OpenAI-compatible chat completions endpoint for the e2e tests: it streams
// "word1 word2 …" one word every 150 ms, for 200 words, in the real wire format, so
// Lens's real client code runs. Usage: node fake-model.mjs PORT
import http from 'node:http';

const port = Number(process.argv[2] ?? 8182);
const server = http.createServer((req, res) => {
  if (req.url === '/healthz') {
    res.writeHead(200).end('ok');
    return;
  }
  if (req.method !== 'POST' || !req.url.endsWith('/chat/completions')) {
    res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":{"message":"no such route"}}');
    return;
  }
  req.resume();
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  let n = 0;
  const timer = setInterval(() => {
    n += 1;
    const done = n > 200;
    const chunk = done
      ? { choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] }
      : { choices: [{ index: 0, delta: { content: `word${n} ` } }] };
    res.write(`data: ${JSON.stringify(chunk)}\n\n`);
    if (done) {
      res.end('data: [DONE]\n\n');
      clearInterval(timer);
    }
  }, 150);
  res.on('close', () => clearInterval(timer));
});
server.listen(port, '127.0.0.1');
