-- The names the documents' examples use without making them, small, so
-- that each example runs on its own. Each example runs in a runtime of its
-- own, in a temporary directory, after this; the modules are globals, as
-- in the glua REPL.
cuda, kernels, pool, batch, dist = require("cuda"), require("kernels"), require("pool"), require("batch"), require("dist")

n = 64
A, B, C = cuda.rand({ n, n }, "float32", 1), cuda.rand({ n, n }, "float32", 2), cuda.zeros({ n, n })
expected = cuda.zeros({ n, n })
kernels.matmul(C, A, B)
kernels.matmul(expected, A, B)
x, y, z = cuda.rand(n, "float32", 3), cuda.rand(n, "float32", 4), cuda.zeros(n)
x16, x32 = cuda.zeros(n, "float16"), cuda.rand(n, "float32", 5)
residual, prediction = cuda.ones(n), cuda.rand(n, "float32", 6)
mask, norms, ceiling = cuda.ones(n), cuda.full(n, 2), cuda.full(n, 0.5)
p, tmp = cuda.rand(n, "float32", 7), cuda.zeros(n)
m, row_max = cuda.rand({ 8, 4 }, "float32", 8), cuda.zeros(8)
d = cuda.zeros({ 16, 8 })
h = cuda.host_array({ 1024, 4 }, "float32")
cuda.save_npy("data.npy", cuda.rand({ 8192, 4 }, "float32", 9))
cuda.save_npy("huge.npy", cuda.rand({ 65536 * 2, 2 }, "float32", 10))
X = cuda.load_npy("data.npy", { mmap = true })
out = cuda.create_npy("out.npy", { 4, 4 })
s = cuda.stream()
start, stop = cuda.event(), cuda.event()
g = cuda.graph(function() kernels.add_scalar(x, 1) end)
k = kernels.jit(function(x, n) local i = kernels.grid(1); if i <= n then x[i] = 2 * x[i] end end)
