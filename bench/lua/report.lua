-- The one wrk script of the harness. Headers come from -H on the command line; the
-- method and body come from the environment, because wrk passes nothing else to a
-- script. done() prints one machine-readable line: wrk's own summary has no p99 in a
-- parseable form, and the harness must see error counts (a fast 401 is not a result).
local method = os.getenv("BENCH_METHOD")
local body_file = os.getenv("BENCH_BODY_FILE")

if method and method ~= "" then
  wrk.method = method
end

if body_file and body_file ~= "" then
  local file = assert(io.open(body_file, "rb"))
  wrk.body = file:read("*a")
  file:close()
  wrk.headers["Content-Type"] = "application/json"
end

done = function(summary, latency, requests)
  local errors = summary.errors
  io.write(string.format(
    'BENCH_RESULT {"requests":%d,"durationUs":%d,"connectErrors":%d,"readErrors":%d,"writeErrors":%d,"statusErrors":%d,"timeouts":%d,"p50Us":%d,"p99Us":%d,"meanUs":%.1f,"maxUs":%d}\n',
    summary.requests, summary.duration,
    errors.connect, errors.read, errors.write, errors.status, errors.timeout,
    latency:percentile(50), latency:percentile(99), latency.mean, latency.max))
end
