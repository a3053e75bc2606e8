-- npu-mem's language server in Neovim (0.8 or newer, built-in LSP client).
-- Put this file in ~/.config/nvim/plugin/ (or `dofile` it from init.lua).
-- tests/editors.rs runs it in Debian's Neovim.

-- The project's directory: the nearest one above the file that holds a
-- project marker, else the file's own directory.
local function project_dir(file)
  local dir = vim.fn.fnamemodify(file, ":p:h")
  for _, marker in ipairs({ "pyproject.toml", "setup.py", "setup.cfg", "requirements.txt" }) do
    local found = vim.fn.findfile(marker, dir .. ";")
    if found ~= "" then
      return vim.fn.fnamemodify(found, ":p:h")
    end
  end
  local git = vim.fn.finddir(".git", dir .. ";")
  if git ~= "" then
    return vim.fn.fnamemodify(git, ":p:h:h")
  end
  return dir
end

vim.api.nvim_create_autocmd("FileType", {
  -- Python, shell launch scripts, and notebooks opened as their JSON text.
  pattern = { "python", "sh", "bash", "json" },
  callback = function(args)
    local file = vim.api.nvim_buf_get_name(args.buf)
    if vim.bo[args.buf].filetype == "json" and not file:match("%.ipynb$") then
      return
    end
    vim.lsp.start({
      name = "npu-mem",
      cmd = { "npu-mem", "server" },
      root_dir = project_dir(file),
      -- Optional, over [tool.npu-mem]: init_options = { target = "2.6", select = { "TX", "API" } },
    })
  end,
})
