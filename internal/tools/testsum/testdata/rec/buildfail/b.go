package buildfail

func F() int { return 1 }
