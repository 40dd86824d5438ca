io.write("before exit\n")
print("printed")
os.exit(3)
print("not reached")
