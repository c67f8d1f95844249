module rec

go 1.26
