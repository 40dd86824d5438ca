#!/usr/bin/env glua
print("after the #! line")
error("on line 3")
