print("never runs")
local t = {
  1, 2,
