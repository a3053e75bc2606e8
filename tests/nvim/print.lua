-- Waits for npu-mem's diagnostics in the current buffer, writes them one a line
-- (`CODE LINE:COLUMN SEVERITY`, 1-based) to $NPU_MEM_NVIM_OUT, and quits.
local got = vim.wait(60000, function()
  return #vim.diagnostic.get(0) > 0
end, 50)
local lines = {}
for _, d in ipairs(vim.diagnostic.get(0)) do
  table.insert(lines, string.format("%s %d:%d %d %s", d.code, d.lnum + 1, d.col + 1, d.severity, d.source))
end
table.sort(lines)
if not got then
  lines = { "no diagnostics within 60 s" }
end
vim.fn.writefile(lines, os.getenv("NPU_MEM_NVIM_OUT"))
vim.cmd("qa!")
