// node-postgres (`pg`) steps for tests/e2e/test_node_pg.py: runs them against
// the server in the environment's PG* variables and prints one JSON line per
// step (rows, or the SQLSTATE of the error).
const { Client } = require("pg");

const steps = [
  ["DROP TABLE IF EXISTS np", null],
  ["CREATE TABLE np (id bigint PRIMARY KEY, name text, amount numeric(10,2), at timestamptz, ok boolean, tags text[])", null],
  ["INSERT INTO np VALUES ($1, $2, $3, $4, $5, $6)", [1, "one", "1.50", "2024-01-02T03:04:05Z", true, ["a", "b c"]]],
  ["INSERT INTO np (id, name) VALUES ($1, $2), ($3, $4) RETURNING id, name", [2, "two", 3, "three"]],
  ["SELECT * FROM np WHERE id >= $1 ORDER BY id", [1]],
  ["SELECT count(*), max(id), array_agg(id ORDER BY id), string_agg(name, ',' ORDER BY id) FROM np", null],
  ["SELECT $1::int + 1 AS n, $2::text AS t, $3::boolean AS b", [41, "x", false]],
  ["UPDATE np SET name = $1 WHERE id = $2 RETURNING *", ["deux", 2]],
  ["INSERT INTO np VALUES ($1, $2) ON CONFLICT (id) DO UPDATE SET name = excluded.name RETURNING name", [3, "trois"]],
  ["DELETE FROM np WHERE id = $1", [1]],
  ["SELECT relname, relkind FROM pg_class WHERE relname = $1", ["np"]],
  ["SELECT nope FROM np", null],
  ["SELECT 1 AS after_error", null],
];

(async () => {
  const client = new Client();
  await client.connect();
  for (const [sql, params] of steps) {
    try {
      const res = params === null ? await client.query(sql) : await client.query(sql, params);
      const rows = res.rows.map((r) => Object.fromEntries(Object.entries(r).map(([k, v]) =>
        [k, v instanceof Date ? v.toISOString() : v])));
      console.log(JSON.stringify({ sql, command: res.command, rowCount: res.rowCount, rows,
        fields: res.fields.map((f) => [f.name, f.dataTypeID]) }));
    } catch (e) {
      console.log(JSON.stringify({ sql, error: e.code }));
    }
  }
  // The same statement prepared by name and run twice.
  for (const id of [2, 3]) {
    const res = await client.query({ name: "by_id", text: "SELECT name FROM np WHERE id = $1", values: [id] });
    console.log(JSON.stringify({ prepared: id, rows: res.rows }));
  }
  await client.end();
})().catch((e) => { console.error(e); process.exit(1); });
