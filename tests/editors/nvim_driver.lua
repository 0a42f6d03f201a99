-- Drives Neovim headless for scripts/test-editors.sh: waits (at most 30 s) until the
-- buffer has diagnostics, then writes one line per diagnostic to $IDEMLINT_EDITOR_OUT
-- ("LINE:COL CODE SEVERITY MESSAGE-START") and quits; exit 1 when none arrived.
local out = assert(io.open(os.getenv("IDEMLINT_EDITOR_OUT"), "w"))
local ok = vim.wait(30000, function()
  return #vim.diagnostic.get(0) > 0
end, 100)
for _, d in ipairs(vim.diagnostic.get(0)) do
  out:write(string.format("%d:%d %s %s %s\n", d.lnum + 1, d.col + 1, tostring(d.code),
    vim.diagnostic.severity[d.severity], d.message:sub(1, 60)))
end
local clients = vim.lsp.get_active_clients()
for _, c in ipairs(clients) do
  out:write("client " .. c.name .. "\n")
end
out:close()
if not ok then
  vim.cmd("cquit 1")
end
vim.cmd("qall!")
