/**
 * Requests that arrived through Bun.serve: HTTP framing bounds their body to the declared
 * Content-Length, so it can be read in one call. A Request built in-process (tests, the testing
 * kit) may declare any length over any stream, so its body is read counting bytes.
 */
const framed = new WeakSet<Request>();

export const markServerFramed = (request: Request): void => {
  framed.add(request);
};

export const isServerFramed = (request: Request): boolean => framed.has(request);
