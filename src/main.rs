fn main() {
    println!("dtemporal: under construction");
}
