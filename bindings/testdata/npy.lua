-- .npy files: what a script saves it loads back, from host and device,
-- read, mapped or pinned; a mapped file uploads and is read-only; bad
-- paths and corrupt files are errors naming the call and the file, and
-- leave nothing held.
local cuda = require("cuda")
local kernels = require("kernels")
local pool = require("pool")
local batch = require("batch")

local baseline = pool.stats().live_arrays

-- write_npy writes an .npy file by hand: header text and data as given.
local function write_npy(path, descr, fortran, shape, data)
  local dict = "{'descr': '" .. descr .. "', 'fortran_order': " .. fortran .. ", 'shape': " .. shape .. ", }"
  local header = dict .. string.rep(" ", (64 - (10 + #dict + 1) % 64) % 64) .. "\n"
  local f = assert(io.open(path, "wb"))
  f:write("\147NUMPY\1\0", string.char(#header % 256, math.floor(#header / 256)), header, data)
  f:close()
  return path
end

local function exists(path)
  local f = io.open(path, "rb")
  if f then f:close() end
  return f ~= nil
end

-- every dtype NumPy has, saved from the host and from the device, loaded
-- each way
for _, dtype in ipairs({ "float32", "float64", "float16", "int32", "int64", "uint8" }) do
  local h = cuda.host_array({ 3, 4 }, dtype)
  local flat = h:reshape(-1)
  for i = 1, #h do flat[i] = i * 5 % 13 + 1 end
  local d = cuda.to_device(h)
  local hpath, dpath = tmpdir .. "/h_" .. dtype .. ".npy", tmpdir .. "/d_" .. dtype .. ".npy"
  h:save_npy(hpath)
  cuda.save_npy(dpath, d)
  for _, path in ipairs({ hpath, dpath }) do
    for _, opts in ipairs({ {}, { mmap = true }, { pinned = true } }) do
      local back = cuda.load_npy(path, opts)
      check.eq(back.dtype, dtype, path .. " dtype")
      check.eq(back.ndim == 2 and back.shape[1] == 3 and back.shape[2] == 4, true, path .. " shape 3x4")
      check.eq(back.mapped, opts.mmap == true, path .. " mapped")
      check.eq(back.pinned, opts.pinned == true, path .. " pinned")
      local got = back:reshape(-1)
      for i = 1, #h do check.eq(got[i], flat[i], path .. " element " .. i) end
    end
  end
  d:free()
end

-- a mapped file uploads, whole and by rows, and cannot be written into
local big = cuda.rand({ 256, 64 }, "float32", 7)
local bigpath = tmpdir .. "/big.npy"
big:save_npy(bigpath)
local m = cuda.load_npy(bigpath, { mmap = true })
check.eq(tostring(m):match("^[^\n]*"), "HostArray<float32>[256x64] 64 KiB")
local up = cuda.to_device(m)
check.eq(kernels.max_abs_diff(up, big), 0, "mapped upload")
local part = cuda.device_array({ 64, 64 })
part:copy_from(m:rows(65, 128))
check.eq(kernels.max_abs_diff(part, big:rows(65, 128)), 0, "mapped rows uploaded")
check.error("HostArray[64]: the array is read-only: memory-mapped from " .. bigpath .. "; map it writable (or load it without mmap) to write into it",
  function() m[1][1] = 0 end)
check.error("DeviceArray:copy_to_host: destination is read-only: memory-mapped from " .. bigpath, big.copy_to_host, big, m)
check.eq(m[1][1], big:copy_to_host()[1][1], "the mapped file unchanged")

-- a file mapped read-write: what is written into the array is in the file
local w = cuda.load_npy(bigpath, { mmap = true, writable = true })
check.eq(w.mapped, true, "writable mapping is mapped")
w[1][2] = 42
local sevens = cuda.full({ 1, 64 }, 7)
sevens:copy_to_host(w:rows(2, 2))
w:flush()
local again = cuda.load_npy(bigpath)
check.eq(again[1][2], 42, "an element written into the file")
check.eq(again[2][1] == 7 and again[2][64] == 7, true, "row 2 of the file written from the device")
check.eq(again[1][1], big:copy_to_host()[1][1], "the rest of the file unchanged")
sevens:free()
check.error("cuda.load_npy: " .. bigpath .. ": writable needs mmap", cuda.load_npy, bigpath, { writable = true })

-- a new file mapped read-write, filled by batch.matmul and read back
local A, B = cuda.rand({ 37, 19 }, "float32", 3), cuda.rand({ 19, 23 }, "float32", 4)
local outpath = tmpdir .. "/product.npy"
local out = cuda.create_npy(outpath, { 37, 23 })
check.eq(out[1][1] == 0 and out[37][23] == 0 and out.mapped, true, "a created file is zero and mapped")
batch.matmul(A:copy_to_host(), B:copy_to_host(), { out = out, budget = 4 * 300 })
out:flush()
local want = kernels.matmul(cuda.zeros({ 37, 23 }), A, B)
local written = cuda.to_device(cuda.load_npy(outpath))
check.eq(kernels.max_abs_diff(written, want) < 1e-4, true, "product written into the file")
written:free()
check.error("batch.matmul: out is memory-mapped read-only", batch.matmul, A:copy_to_host(), B:copy_to_host(),
  { out = cuda.load_npy(outpath, { mmap = true }) })
check.error("cuda.create_npy: " .. tmpdir .. ": is a directory", cuda.create_npy, tmpdir, { 2 })
check.error("cuda.create_npy: bad argument #3", cuda.create_npy, outpath, { 2 }, "float8")
A:free(); B:free(); want:free()

-- what NumPy writes and glua has no own form for: a 0-d scalar loads as
-- one element, big-endian data is swapped
local scalar = cuda.load_npy(write_npy(tmpdir .. "/scalar.npy", "<f8", "False", "()", "\0\0\0\0\0\0\4\64"))
check.eq(scalar.ndim == 1 and scalar.shape[1] == 1 and scalar[1] == 2.5, true, "0-d scalar 2.5 as shape {1}")
local be = cuda.load_npy(write_npy(tmpdir .. "/be.npy", ">i4", "False", "(2,)", "\0\0\0\7\255\255\255\254"))
check.eq(be[1] == 7 and be[2] == -2 and be.dtype == "int32", true, "big-endian int32 7, -2")

-- errors name the call and the file, and hold nothing
local bf16 = cuda.zeros(2, "bfloat16")
local freed = cuda.zeros(2)
freed:free()
local h = cuda.host_array(4)
local live = pool.stats().live_arrays
local function bad(path) return tmpdir .. "/" .. path end
check.error("cuda.load_npy: " .. tmpdir .. ": is a directory, not an .npy file", cuda.load_npy, tmpdir)
check.error("cuda.load_npy: " .. bad("missing.npy") .. ": no such file or directory", cuda.load_npy, bad("missing.npy"))
check.error("cuda.load_npy: " .. bad("missing.npy") .. ": no such file or directory", cuda.load_npy, bad("missing.npy"), { mmap = true })
local f = assert(io.open(bad("text.npy"), "wb"))
f:write("just text")
f:close()
check.error("cuda.load_npy: " .. bad("text.npy") .. ": not an .npy file", cuda.load_npy, bad("text.npy"))
local truncated = write_npy(bad("truncated.npy"), "<f4", "False", "(4,)", string.rep("\0", 8))
check.error("cuda.load_npy: " .. truncated .. ": truncated data: a 4 float32 array needs 16 bytes after the header, and the file has 8",
  cuda.load_npy, truncated, { mmap = true })
local fortran = write_npy(bad("fortran.npy"), "<f4", "True", "(2, 2)", string.rep("\0", 16))
check.error("cuda.load_npy: " .. fortran .. ": fortran_order is True", cuda.load_npy, fortran)
local object = write_npy(bad("object.npy"), "|O", "False", "(2,)", string.rep("\0", 16))
check.error("cuda.load_npy: " .. object .. ": object arrays (dtype '|O') hold Python objects", cuda.load_npy, object)
local uint16 = write_npy(bad("uint16.npy"), "<u2", "False", "(2,)", "\1\0\2\0")
check.error("cuda.load_npy: " .. uint16 .. ": unsupported dtype '<u2' (uint16)", cuda.load_npy, uint16)
check.error("cuda.load_npy: " .. bigpath .. ": mmap and pinned cannot be combined", cuda.load_npy, bigpath, { mmap = true, pinned = true })
check.error("cuda.save_npy: " .. bad("bf16.npy") .. ": bfloat16 has no NumPy dtype; convert the array to float32 first",
  cuda.save_npy, bad("bf16.npy"), bf16)
check.error("DeviceArray:save_npy: " .. bad("freed.npy") .. ": array: use of freed array", freed.save_npy, freed, bad("freed.npy"))
check.error("cuda.save_npy: " .. tmpdir .. ": is a directory", cuda.save_npy, tmpdir, h)
check.error("HostArray:save_npy: " .. bad("no/such/dir.npy") .. ": cannot create a file in its directory: no such file or directory",
  h.save_npy, h, bad("no/such/dir.npy"))
check.error("HostArray:save_npy: bad argument #1 (path must be a string, got nil)", h.save_npy, h)
check.eq(exists(bad("bf16.npy")) or exists(bad("freed.npy")), false, "refused saves wrote no file")
check.eq(pool.stats().live_arrays, live, "live arrays after the errors")

-- the runtime carries on; bfloat16 saves converted to float32, exactly
check.eq(cuda.load_npy(bigpath)[1][2], m[1][2], "a load after the errors")
local hb = cuda.host_array(3, "bfloat16")
hb[1], hb[2], hb[3] = 1.5, -2, 0.0078125
cuda.to_device(hb, "float32"):save_npy(bad("bf16_as_f32.npy"))
local f32 = cuda.load_npy(bad("bf16_as_f32.npy"))
check.eq(f32.dtype, "float32", "bfloat16 saved as")
for i = 1, 3 do check.eq(f32[i], hb[i], "bfloat16 as float32 element " .. i) end

-- once the script drops its arrays nothing is held
bf16, up, part, big = nil, nil, nil, nil
collectgarbage()
check.eq(pool.stats().live_arrays, baseline, "live arrays at the end")
