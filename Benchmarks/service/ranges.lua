-- wrk: random byte ranges of one file, as a player seeking in it does. SIZE comes from the environment.
local size = tonumber(os.getenv("SIZE"))
local key = os.getenv("KEY")
math.randomseed(42)
request = function()
  local start = math.random(0, size - 1)
  local length = math.random(1024, 262144)
  local headers = { ["Range"] = "bytes=" .. start .. "-" .. math.min(size - 1, start + length - 1) }
  if key and key ~= "" then headers["Authorization"] = "Bearer " .. key end
  return wrk.format("GET", nil, headers)
end
done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format("RESULT requests=%d rps=%.0f p50_ms=%.2f p99_ms=%.2f errors=%d\n", summary.requests,
    summary.requests / (summary.duration / 1e6), latency:percentile(50) / 1000, latency:percentile(99) / 1000,
    e.connect + e.read + e.write + e.status + e.timeout))
end
