error("raised while loading")
