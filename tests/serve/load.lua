-- wrk script for tests/serve/load.sh: POSTs the request bodies of a file, one body a line,
-- cycling through them; each thread starts at its own offset. Keep-alive is wrk's default.
--
--   wrk -t2 -c16 -d10s -s tests/serve/load.lua URL -- BODIES LABEL BATCH
--
-- BODIES: the body file (tests/serve/load_bodies.py writes them); LABEL: a name printed back;
-- BATCH: decisions per request (1, or 32 for a batch). done() prints one machine-readable line:
--   WRK_RESULT {"label":…,"requests":…,"duration_s":…,"rps":…,"decisions_per_s":…,
--               "p50_us":…,"p99_us":…,"p999_us":…,"non2xx":…,"errors":{…}}
-- wrk counts a status above 399 in errors.status; this script counts every answer that is not
-- 2xx itself (response()), so a redirect or a 1xx would show too.

-- label, batch and non2xx are globals: done() runs in wrk's main Lua state and reads them from
-- each thread's with thread:get.
local bodies = nil
local counter = 1
local threads = {}
label, batch, non2xx = "", 1, 0

local function read_bodies(file)
  local list = {}
  for line in io.lines(file) do
    if #line > 0 then list[#list + 1] = line end
  end
  if #list == 0 then error("no bodies in " .. file) end
  return list
end

function setup(thread)
  thread:set("id", #threads)
  threads[#threads + 1] = thread
end

function init(args)
  local file = args[1] or error("usage: -- BODIES LABEL BATCH")
  label = args[2] or file
  batch = tonumber(args[3] or "1")
  local list = read_bodies(file)
  local headers = { ["Content-Type"] = "application/json" }
  bodies = {}
  for i, b in ipairs(list) do
    bodies[i] = wrk.format("POST", nil, headers, b)
  end
  counter = (id or 0) * 97 % #bodies + 1
end

function request()
  local r = bodies[counter]
  counter = counter + 1
  if counter > #bodies then counter = 1 end
  return r
end

function response(status, headers, body)
  if status < 200 or status > 299 then non2xx = non2xx + 1 end
end

local function json_string(s)
  return '"' .. tostring(s):gsub('[%c"\\]', function(c) return string.format("\\u%04x", c:byte()) end) .. '"'
end

function done(summary, latency, requests)
  local bad = 0
  local lbl, per = label, batch
  for _, t in ipairs(threads) do
    bad = bad + (t:get("non2xx") or 0)
    lbl = t:get("label") or lbl
    per = t:get("batch") or per
  end
  local secs = summary.duration / 1e6
  local rps = summary.requests / secs
  local e = summary.errors
  io.write(string.format(
    'WRK_RESULT {"label":%s,"requests":%d,"duration_s":%.3f,"rps":%.1f,"decisions_per_s":%.1f,' ..
    '"p50_us":%d,"p99_us":%d,"p999_us":%d,"max_us":%d,"non2xx":%d,' ..
    '"errors":{"connect":%d,"read":%d,"write":%d,"status":%d,"timeout":%d}}\n',
    json_string(lbl), summary.requests, secs, rps, rps * per,
    latency:percentile(50), latency:percentile(99), latency:percentile(99.9), latency.max, bad,
    e.connect, e.read, e.write, e.status, e.timeout))
end
