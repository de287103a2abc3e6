// The context a Crawlee request's lease is taken in when the user gives no `context(request)`:
// its destination as `host[:port]` (README "Crawlee") — `example.com` for the scheme's default
// port, `example.com:8443` for another, so two services on one host keep their reputations
// apart. Pure; owns nothing else.

/** `host[:port]` of the request's URL (the port only when it is not the scheme's default). */
export function destinationOf(request) {
  return new URL(request.url).host;
}
