-- wrk script: a key lookup through POST /graphs/bench/query (one parameterised query).
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.body = '{"query":"query q($n: String) { match { $p: Person { name: $n } } return { $p.name, $p.age } }","params":{"n":"p-4242"}}'
