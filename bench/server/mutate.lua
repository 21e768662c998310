-- wrk script: one-row insert mutations through POST /graphs/bench/mutate, each with a new title.
local n = 0
local tid = 0
local threads = 0
function setup(thread)
  thread:set("tid", threads)
  threads = threads + 1
end
request = function()
  n = n + 1
  local body = '{"query":"query add($t: String) { insert Note { title: $t } }","params":{"t":"w' ..
      tostring(tid) .. '-' .. tostring(n) .. '"}}'
  return wrk.format("POST", nil, {["Content-Type"] = "application/json"}, body)
end
