/**
 * fetch with the answer's body read to the end at once. A body left unread stays paused, and
 * when the server then closes the connection (php -S does after each answer) undici's parser
 * asserts and takes the test process down; global fetch runs on the undici package's dispatcher
 * once that package (the daemon's DevTools WebSocket) has set the global one.
 */
export async function fetchWhole(url: string, init?: RequestInit): Promise<Response> {
  const response = await fetch(url, init);
  const body = await response.arrayBuffer();
  const bodiless = [204, 205, 304].includes(response.status);
  return new Response(bodiless ? null : body, {
    status: response.status,
    statusText: response.statusText,
    headers: response.headers,
  });
}
