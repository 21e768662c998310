// JSON with every digit of big integers.  The server writes U64 and I64 values as bare numbers
// (docs/server.md), and a JavaScript number holds integers exactly only up to 2^53: parsed the
// plain way, 18446744073709551615 would show as 18446744073709552000.  Where the browser hands
// a reviver the number's source text (JSON.parse with source, JSON.rawJSON), such an integer
// becomes a BigInt and is written back as the same digits; elsewhere JSON behaves as before.
const exact = (_k, v, ctx) =>
  typeof v === "number" && !Number.isSafeInteger(v) && ctx && typeof ctx.source === "string" && /^-?\d+$/.test(ctx.source) && JSON.rawJSON
    ? BigInt(ctx.source)
    : v;

export const parseJson = (text) => JSON.parse(text, exact);

export const toJson = (value, space) =>
  JSON.stringify(value, (_k, v) => (typeof v === "bigint" ? JSON.rawJSON(v.toString()) : v), space);
